package dev.delayedtasks.internal.producer;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.test.TestRedis;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * An application with a real database transaction manager (an embedded H2 database, a
 * {@link DataSourceTransactionManager}) beside the starter on a test Redis, producer
 * only, and a listener that records what it is told.
 */
@Configuration(proxyBeanMethods = false)
class TransactionalApp {

	static ApplicationContextRunner runner(TestRedis redis, String... properties) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues(redis.connectionProperties())
			.withPropertyValues("delayed-tasks.key-prefix=" + redis.keyPrefix(), "delayed-tasks.worker.enabled=false")
			.withPropertyValues(properties)
			.withUserConfiguration(TransactionalApp.class);
	}

	@Bean(destroyMethod = "shutdown")
	DataSource dataSource() {
		return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
			.setName("orders-" + UUID.randomUUID())
			.addScript("classpath:dev/delayedtasks/internal/producer/orders.sql")
			.build();
	}

	@Bean
	DataSourceTransactionManager transactionManager(DataSource dataSource) {
		return new DataSourceTransactionManager(dataSource);
	}

	@Bean
	JdbcTemplate jdbcTemplate(DataSource dataSource) {
		return new JdbcTemplate(dataSource);
	}

	@Bean
	TransactionTemplate transactionTemplate(PlatformTransactionManager transactionManager) {
		return new TransactionTemplate(transactionManager);
	}

	@Bean
	RecordingListener recordingListener() {
		return new RecordingListener();
	}

	/**
	 * Records the scheduled and failed callbacks.
	 */
	static final class RecordingListener implements DelayedTaskListener {

		final List<ScheduleResult> scheduled = new CopyOnWriteArrayList<>();

		final List<Failure> failed = new CopyOnWriteArrayList<>();

		@Override
		public void scheduled(String queue, ScheduleResult result) {
			this.scheduled.add(result);
		}

		@Override
		public void afterCommitFailed(String queue, TaskId id, Throwable failure) {
			this.failed.add(new Failure(queue, id, failure));
		}

	}

	record Failure(String queue, TaskId id, Throwable failure) {
	}

}

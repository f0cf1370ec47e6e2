package dev.delayedtasks.autoconfigure;

import java.time.Duration;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.internal.producer.QueueDeclarations;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The producer's safety properties ({@code delayed-tasks.producer.after-commit},
 * {@code delayed-tasks.producer.declared-queues-only} and the declared names under
 * {@code delayed-tasks.queues}): their defaults, their binding, and that an application's
 * own {@link QueueDeclarations} wins. What they do is tested with transactions and
 * handlers in {@code AfterCommitIntegrationTests} and
 * {@code QueueDeclarationsIntegrationTests}.
 */
@WithRedis
class ProducerSafetyPropertiesIntegrationTests {

	private final ApplicationContextRunner runner;

	ProducerSafetyPropertiesIntegrationTests(TestRedis redis) {
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues(redis.connectionProperties())
			.withPropertyValues("delayed-tasks.key-prefix=" + redis.keyPrefix(), "delayed-tasks.worker.enabled=false");
	}

	@Test
	void byDefaultNothingWaitsForACommitAndEveryQueueIsAccepted() {
		this.runner.run((context) -> {
			DelayedTasksProperties.Producer producer = context.getBean(DelayedTasksProperties.class).producer();
			assertThat(producer.afterCommit()).isFalse();
			assertThat(producer.declaredQueuesOnly()).isFalse();
			assertThat(context).hasSingleBean(QueueDeclarations.class);
			assertThat(context.getBean(QueueDeclarations.class).declared()).isEmpty();
			assertThat(context.getBean(DelayedTaskScheduler.class).schedule("undeclared", "x", Duration.ofHours(1)))
				.isNotNull();
		});
	}

	@Test
	void thePropertiesBindAndEveryNameUnderQueuesIsDeclared() {
		this.runner
			.withPropertyValues("delayed-tasks.producer.after-commit=true",
					"delayed-tasks.producer.declared-queues-only=true", "delayed-tasks.queues.emails.concurrency=4",
					"delayed-tasks.queues.audit=")
			.run((context) -> {
				DelayedTasksProperties.Producer producer = context.getBean(DelayedTasksProperties.class).producer();
				assertThat(producer.afterCommit()).isTrue();
				assertThat(producer.declaredQueuesOnly()).isTrue();
				assertThat(context.getBean(QueueDeclarations.class).declared()).containsExactly("audit", "emails");
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				assertThat(scheduler.schedule("audit", "x", Duration.ofHours(1))).isNotNull();
				assertThatExceptionOfType(InvalidTaskRequestException.class)
					.isThrownBy(() -> scheduler.schedule("email", "x", Duration.ofHours(1)))
					.withMessageEndingWith("Did you mean 'emails'?");
			});
	}

	@Test
	void anApplicationsOwnQueueDeclarationsWin() {
		this.runner.withPropertyValues("delayed-tasks.producer.declared-queues-only=true")
			.withBean(QueueDeclarations.class, QueueDeclarations::acceptAll)
			.run((context) -> {
				assertThat(context).hasSingleBean(QueueDeclarations.class);
				assertThat(context.getBean(DelayedTaskScheduler.class).schedule("anything", "x", Duration.ofHours(1)))
					.isNotNull();
			});
	}

}

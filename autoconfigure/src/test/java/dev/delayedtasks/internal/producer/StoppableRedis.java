package dev.delayedtasks.internal.producer;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksMetricsAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksSnapshotsAutoConfiguration;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The outage buffer tests' private {@code redis-server}: a producer-only application on
 * it with the buffer enabled and metrics, and the signals that stop ({@code SIGSTOP}) and
 * resume ({@code SIGCONT}) the server.
 */
final class StoppableRedis {

	private final TestRedis redis;

	StoppableRedis(TestRedis redis) {
		this.redis = redis;
	}

	ApplicationContextRunner runner(String... properties) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksSnapshotsAutoConfiguration.class,
					MetricsAutoConfiguration.class, DelayedTasksMetricsAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues(this.redis.connectionProperties())
			.withPropertyValues("delayed-tasks.key-prefix=" + this.redis.keyPrefix(),
					"delayed-tasks.worker.enabled=false", "spring.data.redis.connect-timeout=500ms",
					"delayed-tasks.producer.outage-buffer.enabled=true")
			.withPropertyValues(properties);
	}

	RedisProcess server() {
		assertThat(this.redis.server()).as("the test stops a redis-server process started by this JVM")
			.isInstanceOf(RedisProcess.class);
		return (RedisProcess) this.redis.server();
	}

	static void signal(String signal, RedisProcess server) throws IOException, InterruptedException {
		Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(server.process().pid())).inheritIO()
			.start();
		assertThat(kill.waitFor(5, TimeUnit.SECONDS)).isTrue();
		assertThat(kill.exitValue()).as("kill -" + signal).isZero();
	}

}

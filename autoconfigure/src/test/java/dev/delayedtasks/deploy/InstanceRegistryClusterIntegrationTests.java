package dev.delayedtasks.deploy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisInstanceRegistry.InstanceRecord;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The instance registry on a Redis Cluster of three masters: its keys share a hash tag,
 * so reports, the one {@code MGET} that reads them, expiry and a leave work there too.
 */
@WithRedis(cluster = true)
class InstanceRegistryClusterIntegrationTests {

	private final ApplicationContextRunner runner;

	InstanceRegistryClusterIntegrationTests(TestRedis redis) {
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues(redis.connectionProperties())
			.withPropertyValues("delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.monitoring.instances=false");
	}

	@Test
	void reportsReadAndLeaveAndExpireOnACluster() {
		this.runner.run((context) -> {
			RedisInstanceRegistry registry = context.getBean(RedisInstanceRegistry.class);
			Instant now = Instant.now();
			for (String id : List.of("c-1", "c-2", "c-3", "c-4")) {
				registry.report(new InstanceRecord(id, "h", 1, "app", now, now, List.of()), Duration.ofMinutes(1));
			}
			registry.report(new InstanceRecord("gone", "h", 1, "app", now, now, List.of()), Duration.ofMillis(100));
			Thread.sleep(300);
			assertThat(registry.alive().instances()).extracting(InstanceRecord::id)
				.containsExactly("c-1", "c-2", "c-3", "c-4");
			registry.leave("c-2");
			assertThat(registry.alive().instances()).extracting(InstanceRecord::id)
				.containsExactly("c-1", "c-3", "c-4");
			for (String id : List.of("c-1", "c-3", "c-4")) {
				registry.leave(id);
			}
		});
	}

}

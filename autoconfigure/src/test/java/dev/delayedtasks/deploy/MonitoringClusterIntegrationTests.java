package dev.delayedtasks.deploy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.LeaseHolders;
import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisInstanceRegistry.InstanceRecord;
import dev.delayedtasks.internal.store.RedisQueueBrowser;
import dev.delayedtasks.internal.store.RedisQueueBrowser.ReadyEntry;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What operators read, on a Redis Cluster of three masters: the instance registry's keys
 * share a hash tag, so reports, the one {@code MGET} that reads them, expiry and a leave
 * work there too; the queue browser's ready page and lease tokens read keys of one
 * partition, sent together to its node, and one task key of the wrong type leaves the
 * others readable.
 */
@WithRedis(cluster = true)
class MonitoringClusterIntegrationTests {

	private final ApplicationContextRunner runner;

	MonitoringClusterIntegrationTests(TestRedis redis) {
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

	@Test
	void readyPagesAndLeaseTokensReadOnACluster() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			RedisQueueBrowser browser = context.getBean(RedisQueueBrowser.class);
			for (String queue : List.of("c-ready", "c-leased", "c-other")) {
				for (int i = 0; i < 3; i++) {
					scheduler.schedule(TaskRequest.of(queue, "x").id(TaskId.of(queue + "-" + i)).priority(i - 1));
				}
			}
			assertThat(browser.ready("c-ready", 0, 20).entries()).extracting(ReadyEntry::id)
				.containsExactly("c-ready-2", "c-ready-1", "c-ready-0");
			ClaimBatch batch = context.getBean(TaskStore.class)
				.claim("c-leased", 3, LeaseHolders.loopNonce(LeaseHolders.newInstanceId(), 1) + ".1");
			assertThat(batch.tasks()).hasSize(3);
			StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			String bad = context.getBean(StoreSettings.class).keys("c-leased").task("c-leased-1");
			redis.delete(bad);
			redis.opsForValue().set(bad, "not a hash");
			List<String> tokens = browser.leaseTokens("c-leased", List.of("c-leased-0", "c-leased-1", "c-leased-2"));
			assertThat(tokens.get(0)).isNotNull();
			assertThat(tokens.get(1)).isNull();
			assertThat(tokens.get(2)).isNotNull();
		});
	}

}

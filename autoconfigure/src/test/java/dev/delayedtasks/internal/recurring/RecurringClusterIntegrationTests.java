package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.annotation.Recurring;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Recurring schedules on a Redis Cluster of three masters: a schedule's keys share its
 * queue's hash tag, so its scripts run on one slot; schedules of queues on different
 * masters run side by side.
 */
@WithRedis(cluster = true)
class RecurringClusterIntegrationTests {

	private final ApplicationContextRunner runner;

	RecurringClusterIntegrationTests(TestRedis redis) {
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues(redis.connectionProperties())
			.withPropertyValues("delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.worker.shutdown-timeout=1s",
					"spring.data.redis.lettuce.cluster.refresh.adaptive=true");
	}

	@Test
	void everyTickRunsOnceOnTheMasterOfItsQueue() {
		this.runner.withUserConfiguration(ClusterHandlers.class).run((context) -> {
			ClusterHandlers handlers = context.getBean(ClusterHandlers.class);
			RecurringTasks recurring = context.getBean(RecurringTasks.class);
			recurring.upsert(RecurringSchedule.fixedRate("cluster-api", "cluster-b", Duration.ofSeconds(1)));
			await().atMost(Duration.ofSeconds(15))
				.until(() -> handlers.a.size() >= 3 && handlers.b.size() >= 3 && handlers.c.size() >= 3);
			assertThat(recurring.list()).hasSize(3).allSatisfy((info) -> assertThat(info.missedTicks()).isZero());
			assertThat(recurring.find("cluster-a").orElseThrow().occurrences()).isGreaterThanOrEqualTo(3);
			recurring.remove("cluster-a");
			recurring.remove("cluster-api");
			recurring.remove("cluster-c");
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class ClusterHandlers {

		final Set<String> a = ConcurrentHashMap.newKeySet();

		final Set<String> b = ConcurrentHashMap.newKeySet();

		final Set<String> c = ConcurrentHashMap.newKeySet();

		@DelayedTaskHandler(queue = "cluster-a")
		@Recurring(id = "cluster-a", fixedRate = "1s")
		void a(TaskContext context) {
			assertThat(this.a.add(context.id().value())).isTrue();
		}

		@DelayedTaskHandler(queue = "cluster-b")
		void b(TaskContext context) {
			assertThat(this.b.add(context.id().value())).isTrue();
		}

		@DelayedTaskHandler(queue = "cluster-c")
		@Recurring(id = "cluster-c", cron = "* * * * * *")
		void c(TaskContext context) {
			assertThat(this.c.add(context.id().value())).isTrue();
		}

	}

}

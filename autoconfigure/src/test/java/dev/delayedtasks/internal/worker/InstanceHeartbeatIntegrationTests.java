package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.List;

import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisInstanceRegistry.HandlerRecord;
import dev.delayedtasks.internal.store.RedisInstanceRegistry.InstanceRecord;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link InstanceHeartbeat} in applications: two instances with handlers each report
 * themselves as they start, with their handlers' queues and concurrency and which of them
 * owns the queue's timer (the id the queue names as timer owner); one that stops
 * gracefully leaves the list at once while the other stays; and
 * {@code delayed-tasks.monitoring.instances=false} reports nothing.
 */
@WithRedis
class InstanceHeartbeatIntegrationTests {

	private final ApplicationContextRunner runner;

	InstanceHeartbeatIntegrationTests(TestRedis redis) {
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.shutdown-timeout=1s", "spring.application.name=reporting-app")
			.withUserConfiguration(Handler.class);
	}

	@Test
	void instancesReportTheirHandlersAndTimerOwnershipAndAGracefulStopLeavesAtOnce() {
		this.runner.run((first) -> this.runner.run((second) -> {
			RedisInstanceRegistry registry = first.getBean(RedisInstanceRegistry.class);
			String firstId = first.getBean(HandlerContainerFactory.class).instanceId();
			String secondId = second.getBean(HandlerContainerFactory.class).instanceId();
			List<InstanceRecord> both = await().atMost(Duration.ofSeconds(30))
				.until(() -> registry.alive().instances(), (instances) -> instances.size() == 2
						&& instances.stream()
							.allMatch((instance) -> !instance.handlers().isEmpty()
									&& instance.handlers().stream().allMatch(HandlerRecord::running))
						&& instances.stream()
							.filter((instance) -> instance.handlers().stream().anyMatch(HandlerRecord::timerOwner))
							.count() == 1);
			assertThat(both).extracting(InstanceRecord::id).containsExactlyInAnyOrder(firstId, secondId);
			for (InstanceRecord instance : both) {
				assertThat(instance.application()).isEqualTo("reporting-app");
				assertThat(instance.pid()).isEqualTo(ProcessHandle.current().pid());
				assertThat(instance.host()).isNotBlank();
				assertThat(instance.handlers()).singleElement().satisfies((handler) -> {
					assertThat(handler.queue()).isEqualTo("reported");
					assertThat(handler.concurrency()).isEqualTo(3);
				});
			}
			((ConfigurableApplicationContext) second.getSourceApplicationContext()).close();
			assertThat(registry.alive().instances()).extracting(InstanceRecord::id).containsExactly(firstId);
		}));
	}

	@Test
	void instancesOffReportsNothing() {
		this.runner.withPropertyValues("delayed-tasks.monitoring.instances=false").run((context) -> {
			assertThat(context).doesNotHaveBean(InstanceHeartbeat.class);
			assertThat(context.getBean(RedisInstanceRegistry.class).alive().instances()).isEmpty();
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Handler {

		@DelayedTaskHandler(queue = "reported", concurrency = "3")
		void handle(String payload) {
		}

	}

}

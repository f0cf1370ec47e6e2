package dev.delayedtasks.internal.recurring;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.actuate.DelayedTasksHealthIndicator;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.annotation.Recurring;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksHealthContributorAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksMetricsAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksRecurringEndpointAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksSnapshotsAutoConfiguration;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Attacks on recurring schedules in a whole application context (handlers, workers,
 * timer, registrar) on a real Redis.
 */
@WithRedis
class RecurringPromisesContextIntegrationTests {

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	RecurringPromisesContextIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksSnapshotsAutoConfiguration.class,
					DelayedTasksMetricsAutoConfiguration.class, DelayedTasksHealthContributorAutoConfiguration.class,
					DelayedTasksRecurringEndpointAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues(redis.connectionProperties())
			.withPropertyValues("delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.worker.shutdown-timeout=1s",
					"delayed-tasks.snapshot-interval=200ms");
	}

	/**
	 * "At startup each instance upserts its schedules and tops every schedule up ..., and
	 * a repair pass every minute does the same: it only recreates occurrences lost with
	 * Redis data". Redis restarts without persistence (or fails over to an empty
	 * replica): the declared schedule must come back without restarting the application.
	 */
	@Test
	void aDeclaredScheduleComesBackAfterRedisLosesItsData() {
		this.runner.withUserConfiguration(LossHandler.class).run((context) -> {
			LossHandler handler = context.getBean(LossHandler.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> handler.ticks.size() >= 2);
			StringRedisTemplate template = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			// Redis restarts empty: every key of this application is gone.
			Set<String> keys = template.keys(this.redis.keyPrefix() + "*");
			template.delete(keys);
			Thread.sleep(2000);
			int before = handler.ticks.size();
			// What the repair pass does every minute (RedisRecurringTasksIntegrationTests
			// runs the pass itself at a shorter interval).
			context.getBean(RecurringScheduleRegistrar.class).restoreDeclared();
			await().atMost(Duration.ofSeconds(10)).until(() -> handler.ticks.size() > before);
			assertThat(context.getBean(RecurringTasks.class).find("rv-loss")).isPresent();
		});
	}

	/**
	 * The application has a Clock bean that is not the system clock (a fixed clock for
	 * its own business logic, here 2020-01-01): "the application's Clock bean when it has
	 * exactly one" is only an estimate; Redis's time decides every tick.
	 */
	@Test
	void aFixedClockBeanInTheApplicationStillRunsEveryTickAndMissesNone() {
		this.runner.withUserConfiguration(ClockHandler.class)
			.withBean(Clock.class, () -> Clock.fixed(Instant.parse("2020-01-01T00:00:00Z"), ZoneOffset.UTC))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				ClockHandler handler = context.getBean(ClockHandler.class);
				await().atMost(Duration.ofSeconds(20)).until(() -> handler.ticks.size() >= 8);
				List<Long> ticks = handler.ticks.stream().sorted().toList();
				for (int i = 1; i < ticks.size(); i++) {
					assertThat(ticks.get(i) - ticks.get(i - 1)).as("consecutive ticks %s", ticks).isEqualTo(1000);
				}
				assertThat(ticks.get(0)).isGreaterThan(Instant.parse("2025-01-01T00:00:00Z").toEpochMilli());
				RecurringScheduleInfo info = context.getBean(RecurringTasks.class).find("rv-clock").orElseThrow();
				assertThat(info.missedTicks()).isZero();
				assertThat(info.nextTick()).isAfter(Instant.now().minusSeconds(2));
				Thread.sleep(500);
				Map<String, Object> details = context.getBean(DelayedTasksHealthIndicator.class)
					.health(true)
					.getDetails();
				assertThat(String.valueOf(details.get("recurringMissingTicks"))).as("health details %s", details)
					.doesNotContain("rv-clock");
				context.getBean(RecurringTasks.class).remove("rv-clock");
			});
	}

	/**
	 * "The queue, which properties must otherwise name, comes from the annotation's
	 * handler": properties over a {@code @Recurring} schedule that also name another
	 * queue must not send the occurrences to a queue the annotated handler does not
	 * handle (or startup must say so).
	 */
	@Test
	void propertiesNamingAnotherQueueOverAnAnnotatedScheduleKeepTheHandlersQueue() {
		this.runner.withUserConfiguration(QueueHandler.class)
			.withPropertyValues("delayed-tasks.recurring.rv-queue.queue=rv-elsewhere",
					"delayed-tasks.recurring.rv-queue.cron=0 0 4 * * *")
			.run((context) -> {
				if (context.getStartupFailure() != null) {
					assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("rv-queue");
					return;
				}
				RecurringScheduleInfo info = context.getBean(RecurringTasks.class).find("rv-queue").orElseThrow();
				context.getBean(RecurringTasks.class).remove("rv-queue");
				assertThat(info.queue()).as("the queue of the annotated handler").isEqualTo("rv-queue-queue");
			});
	}

	/**
	 * End to end: a dead-lettered occurrence that is redriven runs its handler again.
	 */
	@Test
	void aRedrivenOccurrenceRunsItsHandlerAgainEndToEnd() {
		this.runner.withUserConfiguration(RedriveHandler.class).run((context) -> {
			RedriveHandler handler = context.getBean(RedriveHandler.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> handler.failed.get() != null);
			String id = handler.failed.get();
			DeadLetters deadLetters = context.getBean(DeadLetters.class);
			await().atMost(Duration.ofSeconds(5)).until(() -> deadLetters.count("rv-redrive-e2e-queue") == 1);
			assertThat(deadLetters.redrive("rv-redrive-e2e-queue", TaskId.of(id))).isTrue();
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(handler.calls.getOrDefault(id, new AtomicInteger()).get())
					.as("handler calls for %s (calls per occurrence: %s)", id, handler.calls)
					.isEqualTo(2));
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class LossHandler {

		final List<Long> ticks = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = "rv-loss-queue")
		@Recurring(id = "rv-loss", fixedRate = "1s", misfireThreshold = "5s")
		void handle(JsonNode payload, TaskContext context) {
			this.ticks.add(context.dueAt().toEpochMilli());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ClockHandler {

		final Set<Long> ticks = ConcurrentHashMap.newKeySet();

		@DelayedTaskHandler(queue = "rv-clock-queue")
		@Recurring(id = "rv-clock", fixedRate = "1s", misfireThreshold = "2s")
		void handle(JsonNode payload, TaskContext context) {
			this.ticks.add(context.dueAt().toEpochMilli());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class QueueHandler {

		@DelayedTaskHandler(queue = "rv-queue-queue")
		@Recurring(id = "rv-queue", cron = "0 0 2 * * *")
		void handle(JsonNode payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RedriveHandler {

		final AtomicReference<String> failed = new AtomicReference<>();

		final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

		@DelayedTaskHandler(queue = "rv-redrive-e2e-queue")
		@Recurring(id = "rv-redrive-e2e", fixedRate = "2s")
		void handle(JsonNode payload, TaskContext context) {
			String id = context.id().value();
			this.calls.computeIfAbsent(id, (k) -> new AtomicInteger()).incrementAndGet();
			if (this.failed.compareAndSet(null, id)) {
				throw new NonRetryableTaskException("boom");
			}
		}

	}

}

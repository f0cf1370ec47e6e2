package dev.delayedtasks.internal.worker;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskOutcome.Kind;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.tracking.OutcomeTracker;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * completion tracking with real workers on a private Redis.
 */
@WithRedis(privateServer = true)
class TrackingFaultsIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	TrackingFaultsIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases
			.runner(redis, "delayed-tasks.retry.max-retries=0", "delayed-tasks.results.tracked-retention=60s",
					"spring.data.redis.timeout=2s")
			.withUserConfiguration(Handlers.class);
	}

	/**
	 * Two application contexts track one task (the second gets EXISTING); its result is
	 * ~60 KB.
	 */
	@Test
	void twoContextsTrackingOneTaskWithALargeResultAreBothTold() {
		this.runner.run((first) -> this.runner.run((second) -> {
			TrackedTask a = first.getBean(DelayedTaskScheduler.class)
				.track(TaskRequest.of("rv-ok", "60000").id("big-1").delay(Duration.ofSeconds(2)));
			TrackedTask b = second.getBean(DelayedTaskScheduler.class)
				.track(TaskRequest.of("rv-ok", "60000").id("big-1").delay(Duration.ofSeconds(2)));
			assertThat(b.scheduled().outcome()).isEqualTo(ScheduleResult.Outcome.EXISTING);
			CompletableFuture<Optional<TaskOutcome>> c = CompletableFuture.supplyAsync(
					() -> second.getBean(DelayedTaskScheduler.class).awaitOutcome("rv-ok", TaskId.of("big-1"), WAIT));
			for (Optional<TaskOutcome> outcome : List.of(a.await(WAIT), b.await(WAIT), c.join())) {
				assertThat(outcome).hasValueSatisfying((ended) -> {
					assertThat(ended.kind()).isEqualTo(Kind.SUCCEEDED);
					assertThat(ended.result(String.class)).hasValueSatisfying((r) -> assertThat(r).hasSize(60000));
				});
			}
		}));
	}

	/** A tracked task that expires before it runs. */
	@Test
	void aTrackedTaskThatExpiresIsReportedExpired() {
		this.runner.run((context) -> {
			QueueControl control = context.getBean(QueueControl.class);
			control.pause("rv-ok");
			TrackedTask tracked = context.getBean(DelayedTaskScheduler.class)
				.track(TaskRequest.of("rv-ok", "1").id("exp-1").expireAfter(Duration.ofMillis(500)));
			Thread.sleep(1500);
			control.resume("rv-ok");
			assertThat(tracked.await(WAIT))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(Kind.EXPIRED));
		});
	}

	/**
	 * Redis killed and restarted (from an RDB taken just before) while a task is tracked.
	 */
	@Test
	void aTrackedTaskIsToldAfterARedisRestart() throws Exception {
		RedisProcess server = (RedisProcess) this.redis.server();
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			TrackedTask tracked = scheduler.track(TaskRequest.of("rv-ok", "5").id("rs-1").delay(Duration.ofSeconds(4)));
			redis.execute((RedisCallback<Object>) (connection) -> {
				connection.serverCommands().save();
				return null;
			});
			server.kill();
			Thread.sleep(1000);
			server.restart();
			assertThat(tracked.await(WAIT))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(Kind.SUCCEEDED));
		});
	}

	/** Memory over time: many tracked tasks and many waits for unknown ids. */
	@Test
	void trackingMemoryIsReleased() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			List<TrackedTask> tracked = new ArrayList<>();
			for (int i = 0; i < 2000; i++) {
				tracked.add(scheduler.track(TaskRequest.of("rv-ok", "1")));
			}
			for (TrackedTask task : tracked) {
				assertThat(task.await(WAIT)).isPresent();
			}
			for (int i = 0; i < 1000; i++) {
				assertThat(scheduler.awaitOutcome("rv-ok", TaskId.of("unknown-" + i), Duration.ofSeconds(30)))
					.isEmpty();
			}
			// awaits that time out on live tasks
			List<TaskId> live = new ArrayList<>();
			for (int i = 0; i < 20; i++) {
				live.add(scheduler.schedule(TaskRequest.of("rv-ok", "1").delay(Duration.ofHours(1))));
			}
			for (TaskId id : live) {
				assertThat(scheduler.awaitOutcome("rv-ok", id, Duration.ofMillis(50))).isEmpty();
			}
			OutcomeTracker tracker = context.getBean(OutcomeTracker.class);
			Map<?, ?> awaited = (Map<?, ?>) field(tracker, "awaited");
			ScheduledThreadPoolExecutor timeouts = (ScheduledThreadPoolExecutor) field(tracker, "timeouts");
			assertThat(awaited).isEmpty();
			assertThat(timeouts.getQueue()).isEmpty();
		});
	}

	private static Object field(Object target, String name) throws Exception {
		Field field = target.getClass().getDeclaredField(name);
		field.setAccessible(true);
		return field.get(target);
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@DelayedTaskHandler(queue = "rv-ok")
		String ok(String payload) {
			return "x".repeat(Integer.parseInt(payload));
		}

	}

}

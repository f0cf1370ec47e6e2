package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.RateLimitedException;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * A handler that throws {@link RateLimitedException} (docs/flow-control.md, "Slowing down
 * when a downstream says so"): its task goes back to the head of the queue without
 * spending an attempt, and no instance leases a task of the queue until the hold ends in
 * Redis time, not even one handed over by a {@code schedule} call; then the queue runs
 * again at once. Two instances are two application contexts of this JVM.
 */
@WithRedis
class RateLimitedHandlerIntegrationTests {

	private static final Duration HOLD = Duration.ofMillis(1500);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	RateLimitedHandlerIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(SlowDownHandler.class);
	}

	@ParameterizedTest(name = "thrown {0}")
	@ValueSource(strings = { "directly", "as the cause" })
	void aRateLimitedRunHoldsTheQueueOnEveryInstanceAndRunsItsTaskFirstWithoutSpendingAnAttempt(String how) {
		String queue = "slow-down-" + how.replace(' ', '-');
		RunLog log = new RunLog();
		Heard heard = new Heard();
		runTwo(queue, log, heard, "test.wrap=" + how.equals("as the cause"), (a, b) -> {
			DelayedTaskScheduler scheduler = a.getBean(DelayedTaskScheduler.class);
			TaskId limited = scheduler.schedule(TaskRequest.of(queue, "limit"));
			await().atMost(Duration.ofSeconds(5)).until(() -> heard.rateLimited.size() == 1);
			long heldUntil = heldUntil(a, queue);
			assertThat(heldUntil).as("the hold in Redis time").isPositive();
			// Scheduled during the hold, beside idle dispatchers of both instances: not
			// handed over by the schedule calls, not claimed.
			IdleDispatcher.waitFor(b, queue);
			for (int i = 0; i < 6; i++) {
				((i % 2 == 0) ? scheduler : b.getBean(DelayedTaskScheduler.class))
					.schedule(TaskRequest.of(queue, "job " + i));
			}
			await().atMost(HOLD.plusSeconds(5)).until(() -> log.finishedCount() == 7);

			List<Run> runs = log.runs();
			assertThat(runs).hasSize(8);
			List<Run> afterHold = runs.subList(1, runs.size());
			assertThat(afterHold).allSatisfy((run) -> assertThat(run.context().startedAt().toEpochMilli())
				.as("lease of %s, Redis time", run.context().id())
				.isGreaterThanOrEqualTo(heldUntil));
			// Given back to the head of the queue: it runs first, as its first attempt.
			Run again = afterHold.stream()
				.min((x, y) -> x.context().startedAt().compareTo(y.context().startedAt()))
				.orElseThrow();
			assertThat(again.context().id()).isEqualTo(limited);
			assertThat(again.context().attempt()).isEqualTo(1);
			assertThat(again.context().deliveryCount()).isEqualTo(1);
			// Woken at the hold's end, not a poll later.
			assertThat(again.context().startedAt().toEpochMilli() - heldUntil).as("ms after the hold's end")
				.isLessThan(500);
			assertThat(heard.rateLimited).containsExactly(Map.entry(limited, HOLD));
			assertThat(heard.retried).isEmpty();
			ShortLeases.assertPartitionEmpty(a.getBean(StringRedisTemplate.class), this.redis, queue);
		});
	}

	@Test
	void aTaskCancelledWhileItsRateLimitedRunRanIsNotRunAgainButTheQueueIsStillHeldEvenForHandOffs() {
		String queue = "slow-down-cancelled";
		RunLog log = new RunLog();
		Heard heard = new Heard();
		runTwo(queue, log, heard, "test.gated=true", (a, b) -> {
			SlowDownHandler handler = a.getBean(SlowDownHandler.class);
			TaskId limited = a.getBean(DelayedTaskScheduler.class).schedule(TaskRequest.of(queue, "limit"));
			await().atMost(Duration.ofSeconds(5)).until(() -> log.size() == 1);
			// Running: asked to stop, deleted when its run ends.
			assertThat(a.getBean(DelayedTaskScheduler.class).cancel(queue, limited)).isFalse();
			handler.gate.countDown();
			b.getBean(SlowDownHandler.class).gate.countDown();
			await().atMost(Duration.ofSeconds(5)).until(() -> heldUntil(a, queue) > 0);
			long heldUntil = heldUntil(a, queue);
			// Nothing waits in ready: a schedule call beside an idle dispatcher would
			// hand
			// its task over, but not during the hold.
			IdleDispatcher.waitFor(b, queue);
			b.getBean(DelayedTaskScheduler.class).schedule(TaskRequest.of(queue, "during the hold"));
			await().atMost(HOLD.plusSeconds(5)).until(() -> log.finishedCount() == 1);
			assertThat(log.runs().get(1).context().startedAt().toEpochMilli()).as("lease in Redis time")
				.isGreaterThanOrEqualTo(heldUntil);
			ShortLeases.assertNoFurtherRun(() -> assertThat(log.size()).isEqualTo(2));
			assertThat(a.getBean(DelayedTaskScheduler.class).find(queue, limited)).isEmpty();
			assertThat(heard.rateLimited).isEmpty();
		});
	}

	@Test
	void aReleaseWithAHoldStopsEveryClaimUntilItsEndAndALongerHoldInForceStays() {
		String queue = "slow-down-store";
		this.runner.withPropertyValues("test.queue=" + queue + "-unused", "test.instance=a")
			.withBean(RunLog.class, RunLog::new)
			.withBean(Heard.class, Heard::new)
			.run((context) -> {
				TaskStore store = context.getBean(TaskStore.class);
				context.getBean(DelayedTaskScheduler.class).schedule(TaskRequest.of(queue, "held"));
				ClaimBatch first = store.claim(queue, 1, "test-a");
				assertThat(first.tasks()).hasSize(1);
				store.release(queue, List.of(first.tasks().get(0).lease()), Duration.ofSeconds(30));
				long heldUntil = heldUntil(context, queue);
				assertThat(heldUntil - first.now()).isBetween(30_000L, 31_000L);

				ClaimBatch held = store.claim(queue, 1, "test-b");
				assertThat(held.tasks()).isEmpty();
				assertThat(held.throttledUntilMs()).isEqualTo(heldUntil);
				assertThat(context.getBean(RedisQueueStats.class).read(queue).heldUntilMs()).isEqualTo(heldUntil);

				// A shorter hold, asked for while a longer one is in force, leaves it.
				store.release(queue, List.of(), Duration.ofSeconds(1));
				assertThat(heldUntil(context, queue)).isEqualTo(heldUntil);

				// Once the hold is over (moved into the past here), the task is leased.
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				template.opsForHash()
					.put(PartitionKeys.of(this.redis.keyPrefix(), queue).meta(), "fh", Long.toString(first.now()));
				ClaimBatch after = store.claim(queue, 1, "test-c");
				assertThat(after.tasks()).hasSize(1);
				assertThat(after.tasks().get(0).deliveries()).isEqualTo(1);
				assertThat(context.getBean(RedisQueueStats.class).read(queue).heldUntilMs()).isZero();
			});
	}

	@Test
	void aRetryAfterOutOfRangeIsRefusedWithAClearMessage() {
		assertThat(new RateLimitedException(Duration.ofNanos(1)).retryAfter()).isEqualTo(Duration.ofMillis(1));
		assertThat(new RateLimitedException(Duration.ofMillis(1500)).retryAfter()).isEqualTo(HOLD);
		assertThat(new RateLimitedException(RateLimitedException.LONGEST_RETRY_AFTER).retryAfter())
			.isEqualTo(Duration.ofDays(1));
		for (Duration bad : new Duration[] { Duration.ZERO, Duration.ofMillis(-1), Duration.ofDays(1).plusMillis(1) }) {
			assertThatIllegalArgumentException().isThrownBy(() -> new RateLimitedException(bad))
				.withMessageContaining("retryAfter must be")
				.withMessageContaining(bad.toString());
		}
	}

	private void runTwo(String queue, RunLog log, Heard heard, String property, TwoInstances test) {
		ApplicationContextRunner instances = this.runner.withBean(RunLog.class, () -> log)
			.withBean(Heard.class, () -> heard)
			.withPropertyValues("test.queue=" + queue, property);
		instances.withPropertyValues("test.instance=a")
			.run((a) -> instances.withPropertyValues("test.instance=b").run((b) -> test.run(a, b)));
	}

	private long heldUntil(AssertableApplicationContext context, String queue) {
		Object held = context.getBean(StringRedisTemplate.class)
			.opsForHash()
			.get(PartitionKeys.of(this.redis.keyPrefix(), queue).meta(), "fh");
		return (held != null) ? Long.parseLong((String) held) : 0;
	}

	@FunctionalInterface
	interface TwoInstances {

		void run(AssertableApplicationContext a, AssertableApplicationContext b) throws Throwable;

	}

	/** What the listeners of both instances heard. */
	static final class Heard implements DelayedTaskListener {

		final Map<TaskId, Duration> rateLimited = new ConcurrentHashMap<>();

		final List<TaskId> retried = new CopyOnWriteArrayList<>();

		@Override
		public void rateLimited(TaskContext context, Duration retryAfter) {
			this.rateLimited.put(context.id(), retryAfter);
		}

		@Override
		public void retried(TaskContext context, Throwable failure, Instant nextRunAt) {
			this.retried.add(context.id());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SlowDownHandler {

		private final RunLog log;

		private final String instance;

		private final boolean wrap;

		final CountDownLatch gate;

		SlowDownHandler(RunLog log, Environment environment) {
			this.log = log;
			this.instance = environment.getRequiredProperty("test.instance");
			this.wrap = environment.getProperty("test.wrap", Boolean.class, false);
			this.gate = new CountDownLatch(environment.getProperty("test.gated", Boolean.class, false) ? 1 : 0);
		}

		@DelayedTaskHandler(queue = "${test.queue}", concurrency = "4")
		void handle(String payload, TaskContext context) throws InterruptedException {
			Run run = this.log.started(this.instance, context, payload);
			this.gate.await(10, TimeUnit.SECONDS);
			if (payload.equals("limit") && this.log.of(context.id()).size() == 1) {
				RateLimitedException slowDown = new RateLimitedException(HOLD);
				throw this.wrap ? new IllegalStateException("the partner API said 429", slowDown) : slowDown;
			}
			run.finished();
		}

	}

}

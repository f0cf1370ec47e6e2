package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.RateLimitedException;
import dev.delayedtasks.RateLimitedException.Scope;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * A handler's {@code RateLimitedException} of {@link Scope#KEY} (docs/flow-control.md,
 * "Slowing down when a downstream says so"): only the task's rate key is held, its tasks
 * start after the hold's end in Redis time, the held one first and as the same attempt,
 * while other keys run on; without a rate key, or on a queue without a
 * {@code key-rate-limit}, the whole queue is held instead.
 */
@WithRedis
class KeyHoldIntegrationTests {

	private static final Duration HOLD = Duration.ofMillis(1500);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	KeyHoldIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(KeySlowDownHandler.class);
	}

	@Test
	void aKeyHoldHoldsOnlyItsKeyAndItsTaskRunsFirstWhenItEnds() {
		String queue = "key-hold";
		RunLog log = new RunLog();
		Heard heard = new Heard();
		run(queue, log, heard, true, (context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId limited = scheduler.schedule(request(queue, "hot", "limit"));
			await().atMost(Duration.ofSeconds(5)).until(() -> heard.rateLimited.size() == 1);
			long heldUntil = field(context, keys(queue).base() + "kp:hot", "h");
			assertThat(heldUntil).as("the key's hold in Redis time").isPositive();
			for (int i = 0; i < 3; i++) {
				scheduler.schedule(request(queue, "hot", "job " + i));
				scheduler.schedule(request(queue, "cold", "job " + i));
				scheduler.schedule(request(queue, null, "job " + i));
			}
			await().atMost(HOLD.plusSeconds(5)).until(() -> log.finishedCount() == 10);

			List<Run> afterHold = log.runs().subList(1, log.runs().size());
			List<Run> hot = afterHold.stream()
				.filter((run) -> String.valueOf(run.payload()).startsWith("hot:"))
				.toList();
			List<Run> others = afterHold.stream().filter((run) -> !hot.contains(run)).toList();
			assertThat(hot).hasSize(4)
				.allSatisfy((run) -> assertThat(run.context().startedAt().toEpochMilli())
					.as("lease of %s, Redis time", run.payload())
					.isGreaterThanOrEqualTo(heldUntil));
			assertThat(others).hasSize(6)
				.allSatisfy((run) -> assertThat(run.context().startedAt().toEpochMilli())
					.as("lease of %s during the key's hold", run.payload())
					.isLessThan(heldUntil));
			// The first of its key leased (leases of one claim share a start time; their
			// fences grow in the order the claim leased them).
			Run again = hot.stream().min(Comparator.comparingLong(KeyHoldIntegrationTests::fence)).orElseThrow();
			assertThat(again.context().id()).isEqualTo(limited);
			assertThat(again.context().attempt()).isEqualTo(1);
			assertThat(again.context().deliveryCount()).isEqualTo(1);
			assertThat(again.context().startedAt().toEpochMilli() - heldUntil).as("ms after the hold's end")
				.isLessThan(500);
			assertThat(heard.rateLimited).containsExactly(Map.entry(limited, HOLD));
			assertThat(field(context, keys(queue).meta(), "fh")).as("the queue's hold").isZero();
			ShortLeases.assertPartitionEmpty(context.getBean(StringRedisTemplate.class), this.redis, queue);
		});
	}

	@Test
	void aKeyHoldOfATaskWithoutARateKeyHoldsTheQueue() {
		holdsTheQueue("key-hold-no-key", true, null);
	}

	@Test
	void aKeyHoldOnAQueueWithoutAKeyRateLimitHoldsTheQueue() {
		holdsTheQueue("key-hold-no-limit", false, "hot");
	}

	@Test
	void aScopeIsRequired() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RateLimitedException(HOLD, (Scope) null))
			.withMessageContaining("scope must not be null");
		assertThat(new RateLimitedException(HOLD, Scope.KEY).getMessage())
			.isEqualTo("Rate limited: the task's rate key is held for 1500 ms");
	}

	private void holdsTheQueue(String queue, boolean keyLimit, String rateKey) {
		RunLog log = new RunLog();
		Heard heard = new Heard();
		run(queue, log, heard, keyLimit, (context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduler.schedule(request(queue, rateKey, "limit"));
			await().atMost(Duration.ofSeconds(5)).until(() -> heard.rateLimited.size() == 1);
			long heldUntil = field(context, keys(queue).meta(), "fh");
			assertThat(heldUntil).as("the queue's hold in Redis time").isPositive();
			scheduler.schedule(request(queue, "cold", "job"));
			await().atMost(HOLD.plusSeconds(5)).until(() -> log.finishedCount() == 2);
			assertThat(log.runs().subList(1, 3)).allSatisfy(
					(run) -> assertThat(run.context().startedAt().toEpochMilli()).isGreaterThanOrEqualTo(heldUntil));
		});
	}

	private static TaskRequest request(String queue, String rateKey, String label) {
		TaskRequest request = TaskRequest.of(queue, ((rateKey != null) ? rateKey : "none") + ":" + label);
		return (rateKey != null) ? request.rateKey(rateKey) : request;
	}

	private void run(String queue, RunLog log, Heard heard, boolean keyLimit, ContextTest test) {
		ApplicationContextRunner instance = this.runner.withBean(RunLog.class, () -> log)
			.withBean(Heard.class, () -> heard)
			.withPropertyValues("test.queue=" + queue, "test.instance=a");
		if (keyLimit) {
			// High enough never to bind: only the hold holds the key back.
			instance = instance.withPropertyValues("delayed-tasks.queues." + queue + ".key-rate-limit=100/1s");
		}
		instance.run((context) -> {
			if (keyLimit) {
				await().atMost(Duration.ofSeconds(5))
					.until(() -> context.getBean(StringRedisTemplate.class)
						.opsForHash()
						.get(keys(queue).meta(), "fl") != null);
			}
			test.run(context);
		});
	}

	private static long fence(Run run) {
		String token = run.context().leaseToken();
		return Long.parseLong(token.substring(token.lastIndexOf(':') + 1));
	}

	private PartitionKeys keys(String queue) {
		return PartitionKeys.of(this.redis.keyPrefix(), queue);
	}

	private static long field(AssertableApplicationContext context, String key, String field) {
		Object value = context.getBean(StringRedisTemplate.class).opsForHash().get(key, field);
		return (value != null) ? Long.parseLong((String) value) : 0;
	}

	@FunctionalInterface
	interface ContextTest {

		void run(AssertableApplicationContext context) throws Throwable;

	}

	/** What the listeners heard. */
	static final class Heard implements DelayedTaskListener {

		final Map<TaskId, Duration> rateLimited = new ConcurrentHashMap<>();

		@Override
		public void rateLimited(TaskContext context, Duration retryAfter) {
			this.rateLimited.put(context.id(), retryAfter);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class KeySlowDownHandler {

		private final RunLog log;

		private final String instance;

		KeySlowDownHandler(RunLog log, Environment environment) {
			this.log = log;
			this.instance = environment.getRequiredProperty("test.instance");
		}

		@DelayedTaskHandler(queue = "${test.queue}", concurrency = "4")
		void handle(String payload, TaskContext context) {
			Run run = this.log.started(this.instance, context, payload);
			if (payload.endsWith(":limit") && this.log.of(context.id()).size() == 1) {
				throw new RateLimitedException(HOLD, Scope.KEY);
			}
			run.finished();
		}

	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.QueueCounter;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.Concurrency;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.FlowHandler;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.Job;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A queue's rate limit per key ({@code delayed-tasks.queues.<queue>.key-rate-limit},
 * {@link TaskRequest#rateKey(String)}, docs/flow-control.md): each key's starts stay
 * within its window across instances, in the order the key's tasks were ready, while
 * tasks of other keys and without a key run at once behind a throttled key's backlog; the
 * key's state in Redis expires once idle. Two instances are two application contexts of
 * this JVM, so handler starts are timed on one clock.
 */
@WithRedis
class KeyRateLimitIntegrationTests {

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	KeyRateLimitIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(FlowHandler.class);
	}

	@Test
	void aHotKeyKeepsToItsLimitInOrderWhileOtherKeysRunAtOnceBehindItsBacklog() {
		String queue = "key-rate";
		int hot = 20;
		RunLog log = new RunLog();
		ApplicationContextRunner instances = this.runner.withBean(RunLog.class, () -> log)
			.withBean(Concurrency.class, () -> new Concurrency(false))
			.withPropertyValues("test.queue=" + queue, "test.concurrency=8",
					"delayed-tasks.queues." + queue + ".key-rate-limit=5/1s");
		instances.withPropertyValues("test.instance=a")
			.run((a) -> instances.withPropertyValues("test.instance=b").run((b) -> {
				QueueLimits configured = new QueueLimits(null, null, RateLimit.parse("5/1s"));
				await().atMost(Duration.ofSeconds(5))
					.until(() -> configured.equals(a.getBean(QueueControl.class).limits(queue)));
				// The hot key's backlog first, then tasks of other keys and without one.
				List<TaskRequest> requests = new ArrayList<>();
				for (int i = 0; i < hot; i++) {
					requests.add(TaskRequest.of(queue, new Job(i)).rateKey("customer-hot"));
				}
				for (int i = hot; i < hot + 10; i++) {
					requests.add(TaskRequest.of(queue, new Job(i)).rateKey("customer-" + i));
				}
				for (int i = hot + 10; i < hot + 15; i++) {
					requests.add(TaskRequest.of(queue, new Job(i)));
				}
				long sent = System.nanoTime();
				List<ScheduleResult> results = a.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
				Set<TaskId> ids = results.stream().map(ScheduleResult::id).collect(Collectors.toSet());

				// Set aside in the schedule: cancelled there like any scheduled task.
				TaskId last = results.get(hot - 1).id();
				await().atMost(Duration.ofSeconds(5))
					.until(() -> a.getBean(RedisQueueStats.class)
						.read(queue)
						.counter(QueueCounter.SET_ASIDE_BY_KEY) >= hot - 5);
				assertThat(a.getBean(DelayedTaskScheduler.class).cancel(queue, last)).isTrue();
				ids.remove(last);

				await().atMost(Duration.ofSeconds(15)).until(() -> log.finishedCount() == ids.size());
				List<Run> runs = log.runs();
				FlowControlIntegrationTests.assertOncePerTask(runs, ids);
				List<Run> hotRuns = runs.stream().filter((run) -> index(run) < hot).toList();
				List<Run> others = runs.stream().filter((run) -> index(run) >= hot).toList();

				// The others did not wait behind the hot key's backlog.
				assertThat(others).hasSize(15)
					.allSatisfy((run) -> assertThat((run.startedNanos() - sent) / 1_000_000)
						.as("ms from scheduleAll to the start of task %d", index(run))
						.isLessThan(1500));
				// The hot key: never more than 5 leases in any second of Redis time...
				List<Long> leasedAt = hotRuns.stream()
					.map((run) -> run.context().startedAt().toEpochMilli())
					.sorted()
					.toList();
				FlowControlIntegrationTests.assertNoWindowHoldsMore(leasedAt, 5, 1000, "hot key leases (ms)");
				// ...used: 19 tasks, the first 5 at once and then 5 a second...
				long span = leasedAt.get(leasedAt.size() - 1) - leasedAt.get(0);
				assertThat(span).as("ms from the first lease of the hot key to its last").isBetween(2500L, 4500L);
				// ...and leased in the order its tasks were ready (fences grow with each
				// lease of the partition).
				List<Integer> leaseOrder = hotRuns.stream()
					.sorted(Comparator.comparingLong(KeyRateLimitIntegrationTests::fence))
					.map(KeyRateLimitIntegrationTests::index)
					.toList();
				assertThat(leaseOrder).isSorted();

				// The keys' windows and lines expire once idle.
				StringRedisTemplate template = a.getBean(StringRedisTemplate.class);
				String base = PartitionKeys.of(this.redis.keyPrefix(), queue).base();
				assertThat(template.getExpire(base + "ks:customer-hot")).isPositive();
				await().atMost(Duration.ofSeconds(5))
					.untilAsserted(() -> assertThat(template.keys(base + "k*:*")).isEmpty());
				ShortLeases.assertPartitionEmpty(template, this.redis, queue);
			}));
	}

	@Test
	void aRateKeyIsCheckedWhenTheTaskIsScheduledAndChangingTheLimitAtRunTimeKeepsTheOthers() {
		String queue = "key-rate-settings";
		this.runner.withBean(RunLog.class, RunLog::new)
			.withBean(Concurrency.class, () -> new Concurrency(false))
			.withPropertyValues("test.queue=" + queue, "test.instance=a",
					"delayed-tasks.queues." + queue + ".rate-limit=100/1s")
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				for (String bad : new String[] { "", "a b", "x".repeat(65), "ключ" }) {
					assertThatExceptionOfType(InvalidTaskRequestException.class)
						.isThrownBy(() -> scheduler.schedule(TaskRequest.of(queue, new Job(0)).rateKey(bad)))
						.withMessageContaining("Rate key '");
				}
				QueueControl control = context.getBean(QueueControl.class);
				await().atMost(Duration.ofSeconds(5)).until(() -> control.limits(queue).rateLimit() != null);
				control.setLimits(queue,
						new QueueLimits(control.limits(queue).rateLimit(), 3, RateLimit.parse("2/10s")));
				assertThat(control.limits(queue))
					.isEqualTo(new QueueLimits(RateLimit.parse("100/1s"), 3, RateLimit.parse("2/10s")));
				assertThat(control.limits(queue).toString())
					.isEqualTo("rate-limit 100/1s, global-concurrency 3, key-rate-limit 2/10s");
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				assertThat(template.opsForHash().get(PartitionKeys.of(this.redis.keyPrefix(), queue).meta(), "fl"))
					.isEqualTo("100 1000 3 2 10000");
			});
	}

	private static int index(Run run) {
		return ((Job) run.payload()).index();
	}

	private static long fence(Run run) {
		String token = run.context().leaseToken();
		return Long.parseLong(token.substring(token.lastIndexOf(':') + 1));
	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
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
import static org.awaitility.Awaitility.await;

/**
 * A queue's flow control ({@code delayed-tasks.queues.<queue>.rate-limit} and
 * {@code global-concurrency}, or {@link QueueControl#setLimits}) holds for every instance
 * of an application together, is used to the full, changes at run time, and survives a
 * restart unless the configuration changed. Each test has a queue of its own under the
 * class's key prefix; instances are application contexts of this JVM, so handler starts
 * are timed on one clock.
 */
@WithRedis
class FlowControlIntegrationTests {

	/**
	 * Idle dispatchers block far longer than a test, and the timer owner, whose ticks
	 * wake them too, ticks only when a lease could expire (10 s) or a task falls due:
	 * only the wake tokens of the scripts that end a lease let the next task start in
	 * time.
	 */
	private static final String[] ONLY_WAKE_TOKENS = { "delayed-tasks.worker.block-timeout=20s",
			"delayed-tasks.worker.lease-duration=10s", "delayed-tasks.worker.timer-ttl=30s" };

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	FlowControlIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(FlowHandler.class);
	}

	/**
	 * 20 a second for 6 seconds in CI; docs/flow-control.md's figure of 100 a second for
	 * 30 seconds comes from {@code -Ddelayed-tasks.test.flow-rate.count=100
	 * -Ddelayed-tasks.test.flow-rate.seconds=30}.
	 */
	@Test
	void aRateLimitHoldsForThreeInstancesTogetherAndIsUsedToTheFull() {
		String queue = "flow-rate";
		int count = Integer.getInteger("delayed-tasks.test.flow-rate.count", 20);
		int tasks = count * (1 + Integer.getInteger("delayed-tasks.test.flow-rate.seconds", 6));
		RunLog log = new RunLog();
		ApplicationContextRunner instances = instances(queue, log, new Concurrency(false),
				"delayed-tasks.queues." + queue + ".rate-limit=" + count + "/1s", "test.concurrency=8")
			.withUserConfiguration(WarmUpHandler.class);
		runThree(instances, (a, b, c) -> {
			QueueLimits configured = new QueueLimits(RateLimit.parse(count + "/1s"), null);
			await().atMost(Duration.ofSeconds(5)).until(() -> configured.equals(limits(b, queue)));
			// Handlers that run for the first time (class loading, JIT) start late: each
			// instance runs a few tasks of an unlimited queue first, so that the starts
			// timed below differ from their leases by the delivery time only.
			for (AssertableApplicationContext instance : List.of(a, b, c)) {
				warmUp(instance, queue + "-warm", log);
			}
			for (AssertableApplicationContext instance : List.of(a, b, c)) {
				IdleDispatcher.waitFor(instance, queue);
			}
			List<TaskRequest> requests = new ArrayList<>();
			for (int i = 0; i < tasks; i++) {
				requests.add(TaskRequest.of(queue, new Job(i)));
			}
			Set<TaskId> ids = a.getBean(DelayedTaskScheduler.class)
				.scheduleAll(requests)
				.stream()
				.map(ScheduleResult::id)
				.collect(Collectors.toSet());
			assertThat(ids).hasSize(tasks);
			await().atMost(Duration.ofSeconds(tasks / count + 14)).until(() -> ofQueue(log, queue).size() >= tasks);
			await().atMost(Duration.ofSeconds(10)).until(() -> finished(ofQueue(log, queue)) >= tasks);
			// Nothing is left to run again: no task, lease, hint or schedule.
			ShortLeases.assertPartitionEmpty(a.getBean(StringRedisTemplate.class), this.redis, queue);
			List<Run> runs = ofQueue(log, queue);
			assertOncePerTask(runs, ids);

			// Redis time of each lease (the claim's, as the script counts it): exact.
			List<Long> leasedAt = runs.stream()
				.map((run) -> run.context().startedAt().toEpochMilli())
				.sorted()
				.toList();
			assertNoWindowHoldsMore(leasedAt, count, 1000, "leases in Redis time (ms)");
			// Handler starts on this host: the same, less 50 ms of delivery jitter.
			List<Long> startedAt = runs.stream().map(Run::startedNanos).sorted().toList();
			List<Long> startedMillis = startedAt.stream()
				.map((nanos) -> (nanos - startedAt.get(0)) / 1_000_000)
				.toList();
			System.out.println("flow-rate starts per instance a=" + on(runs, "a") + " b=" + on(runs, "b") + " c="
					+ on(runs, "c") + ", delivery jitter " + RunLog.describe(jitterMillis(runs)));
			assertNoWindowHoldsMore(startedMillis, count, 950, "handler starts on this host (ms)");
			// Used, not just obeyed: after the first burst of 20, 20 more a second.
			double seconds = (startedAt.get(tasks - 1) - startedAt.get(0)) / 1e9;
			double rate = (tasks - count) / seconds;
			System.out.printf("flow-rate %d starts in %.2f s: %.2f a second after the first burst%n", tasks, seconds,
					rate);
			assertThat(rate).as("starts a second after the first burst").isBetween(count * 0.85, count * 1.15);
		});
	}

	@Test
	void aGlobalConcurrencyHoldsForThreeInstancesTogetherAndIsUsedToTheFull() {
		String queue = "flow-global";
		int tasks = 60;
		RunLog log = new RunLog();
		Concurrency concurrency = new Concurrency(false);
		ApplicationContextRunner instances = instances(queue, log, concurrency,
				"delayed-tasks.queues." + queue + ".global-concurrency=5", "test.concurrency=8", "test.sleep-ms=100")
			.withPropertyValues(ONLY_WAKE_TOKENS);
		runThree(instances, (a, b, c) -> {
			await().atMost(Duration.ofSeconds(5)).until(() -> new QueueLimits(null, 5).equals(limits(c, queue)));
			StringRedisTemplate template = a.getBean(StringRedisTemplate.class);
			PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
			assertThat(template.opsForHash().get(keys.meta(), "fl")).isEqualTo("0 0 5");
			for (AssertableApplicationContext instance : List.of(a, b, c)) {
				IdleDispatcher.waitFor(instance, queue);
			}
			List<TaskRequest> requests = new ArrayList<>();
			for (int i = 0; i < tasks; i++) {
				requests.add(TaskRequest.of(queue, new Job(i)));
			}
			long scheduled = System.nanoTime();
			Set<TaskId> ids = b.getBean(DelayedTaskScheduler.class)
				.scheduleAll(requests)
				.stream()
				.map(ScheduleResult::id)
				.collect(Collectors.toSet());
			// 60 runs of 100 ms, 5 at a time: 1.2 s; 30 s if only the timer's ticks woke
			// the dispatchers.
			await().atMost(Duration.ofSeconds(8)).until(() -> finished(log.runs()) >= tasks);
			long elapsedMillis = (System.nanoTime() - scheduled) / 1_000_000;
			ShortLeases.assertPartitionEmpty(template, this.redis, queue);
			System.out.println("flow-global " + tasks + " tasks in " + elapsedMillis + " ms, at most "
					+ concurrency.max() + " at once, per instance a=" + on(log.runs(), "a") + " b="
					+ on(log.runs(), "b") + " c=" + on(log.runs(), "c"));
			assertOncePerTask(log.runs(), ids);
			assertThat(concurrency.max()).as("most handlers running at once on the three instances").isEqualTo(5);
		});
	}

	@Test
	void aLimitChangedAtRunTimeTakesEffectWithinASecondOnEveryInstance() {
		String queue = "flow-change";
		int tasks = 40;
		RunLog log = new RunLog();
		ApplicationContextRunner instances = instances(queue, log, new Concurrency(false),
				"delayed-tasks.queues." + queue + ".rate-limit=2/1s", "test.concurrency=8");
		instances.withPropertyValues("test.instance=a").run((a) -> {
			instances.withPropertyValues("test.instance=b").run((b) -> {
				QueueControl control = a.getBean(QueueControl.class);
				await().atMost(Duration.ofSeconds(5))
					.until(() -> new QueueLimits(RateLimit.parse("2/1s"), null).equals(limits(a, queue)));
				List<TaskRequest> requests = new ArrayList<>();
				for (int i = 0; i < tasks; i++) {
					requests.add(TaskRequest.of(queue, new Job(i)));
				}
				Set<TaskId> ids = b.getBean(DelayedTaskScheduler.class)
					.scheduleAll(requests)
					.stream()
					.map(ScheduleResult::id)
					.collect(Collectors.toSet());
				Thread.sleep(2000);
				int before = log.size();
				List<Long> leasedBefore = log.runs()
					.stream()
					.map((run) -> run.context().startedAt().toEpochMilli())
					.sorted()
					.toList();
				long changed = System.nanoTime();
				QueueLimits faster = new QueueLimits(RateLimit.parse("50/1s"), null);
				control.setLimits(queue, faster);
				assertThat(b.getBean(QueueControl.class).limits(queue)).isEqualTo(faster);
				// 2 a second for 2 s: the first 2 at once, 2 after 1 s, perhaps 2 after 2
				// s.
				assertThat(before).as("tasks started before the change").isBetween(4, 6);
				assertNoWindowHoldsMore(leasedBefore, 2, 1000, "leases before the change (ms)");
				// Dispatchers waiting for the rate window claim again within a second,
				// under the new limit: the 34 or more left start at once.
				await().atMost(Duration.ofSeconds(3)).until(() -> log.size() >= tasks);
				long allStartedMillis = (System.nanoTime() - changed) / 1_000_000;
				System.out.println("flow-change " + before + " started before the change, the other " + (tasks - before)
						+ " within " + allStartedMillis + " ms after it");
				await().atMost(Duration.ofSeconds(10)).until(() -> finished(log.runs()) >= tasks);
				ShortLeases.assertPartitionEmpty(a.getBean(StringRedisTemplate.class), this.redis, queue);
				assertOncePerTask(log.runs(), ids);
			});
		});
	}

	@Test
	void aRunTimeChangeOutlivesRestartsWithTheSameConfigurationAndAChangedOneOverridesIt() {
		String queue = "flow-restart";
		RunLog log = new RunLog();
		ApplicationContextRunner instance = instances(queue, log, new Concurrency(false), "test.instance=a");
		String rateLimit = "delayed-tasks.queues." + queue + ".rate-limit=";
		PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
		QueueLimits five = new QueueLimits(RateLimit.parse("5/1s"), null);
		QueueLimits seven = new QueueLimits(RateLimit.parse("7/1s"), null);
		QueueLimits nine = new QueueLimits(RateLimit.parse("9/1s"), null);
		instance.withPropertyValues(rateLimit + "5/1s").run((context) -> {
			QueueControl control = context.getBean(QueueControl.class);
			await().atMost(Duration.ofSeconds(5)).until(() -> five.equals(control.limits(queue)));
			StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
			assertThat(template.opsForHash().multiGet(keys.meta(), List.of("fl", "flc"))).containsExactly("5 1000 0",
					"5 1000 0");
			control.setLimits(queue, seven);
			assertThat(control.limits(queue)).isEqualTo(seven);
			assertThat(template.opsForHash().multiGet(keys.meta(), List.of("fl", "flc"))).containsExactly("7 1000 0",
					"5 1000 0");
		});
		instance.withPropertyValues(rateLimit + "5/1s").run((context) -> {
			// A task that ran was claimed: the dispatcher had written (or kept) the
			// limits before its first claim.
			runOne(context, queue, log);
			assertThat(context.getBean(QueueControl.class).limits(queue)).isEqualTo(seven);
		});
		instance.withPropertyValues(rateLimit + "9/1s").run((context) -> {
			QueueControl control = context.getBean(QueueControl.class);
			await().atMost(Duration.ofSeconds(5)).until(() -> nine.equals(control.limits(queue)));
			runOne(context, queue, log);
			assertThat(control.limits(queue)).isEqualTo(nine);
			assertThat(context.getBean(StringRedisTemplate.class).opsForHash().get(keys.meta(), "flc"))
				.isEqualTo("9 1000 0");
		});
		// The handler is still there, with no flow control configured for its queue.
		instance.run((context) -> {
			QueueControl control = context.getBean(QueueControl.class);
			await().atMost(Duration.ofSeconds(5)).until(() -> QueueLimits.NONE.equals(control.limits(queue)));
			runOne(context, queue, log);
			assertThat(control.limits(queue)).isEqualTo(QueueLimits.NONE);
		});
	}

	@ParameterizedTest(name = "retry delay {0}")
	@ValueSource(strings = { "0s", "2s" })
	void aSlotFreedByAFailureIsTakenByTheNextTaskAndEveryRetryRunsAlone(String retryDelay) {
		String queue = "flow-fail-" + retryDelay;
		int tasks = 8;
		RunLog log = new RunLog();
		Concurrency concurrency = new Concurrency(false);
		// Idle dispatchers block far longer than the test: only the wake tokens of the
		// scripts that end a lease (fail first, then ack) let the next task start.
		ApplicationContextRunner instances = instances(queue, log, concurrency,
				"delayed-tasks.queues." + queue + ".global-concurrency=1",
				"delayed-tasks.queues." + queue + ".retry.delay=" + retryDelay,
				"delayed-tasks.queues." + queue + ".retry.jitter=0s", "test.concurrency=4", "test.sleep-ms=30",
				"test.fail-first=true")
			.withPropertyValues(ONLY_WAKE_TOKENS);
		instances.withPropertyValues("test.instance=a").run((a) -> {
			instances.withPropertyValues("test.instance=b").run((b) -> {
				await().atMost(Duration.ofSeconds(5)).until(() -> new QueueLimits(null, 1).equals(limits(b, queue)));
				IdleDispatcher.waitFor(a, queue);
				IdleDispatcher.waitFor(b, queue);
				List<TaskRequest> requests = new ArrayList<>();
				for (int i = 0; i < tasks; i++) {
					requests.add(TaskRequest.of(queue, new Job(i)));
				}
				Set<TaskId> ids = a.getBean(DelayedTaskScheduler.class)
					.scheduleAll(requests)
					.stream()
					.map(ScheduleResult::id)
					.collect(Collectors.toSet());
				// 16 runs of 30 ms, one at a time (the retries after 2 s, if so delayed):
				// each first run's failure must wake the dispatcher for the next task,
				// not its retry's promotion.
				await().atMost(Duration.ofSeconds(10)).until(() -> finished(log.runs()) >= tasks);
				ShortLeases.assertPartitionEmpty(a.getBean(StringRedisTemplate.class), this.redis, queue);
				Map<TaskId, List<Run>> byId = log.byId();
				assertThat(byId.keySet()).isEqualTo(ids);
				assertThat(byId.values()).allSatisfy((runs) -> {
					assertThat(runs).extracting((run) -> run.context().attempt()).containsExactly(1, 2);
					assertThat(runs.get(0).isFinished()).isFalse();
					assertThat(runs.get(1).isFinished()).isTrue();
				});
				System.out.println("flow-fail " + retryDelay + ": " + log.size() + " runs, per instance a="
						+ on(log.runs(), "a") + " b=" + on(log.runs(), "b"));
				assertThat(concurrency.max()).as("most handlers running at once on the two instances").isEqualTo(1);
				// 8 first runs of 30 ms, one after the other: 0.3 s, whatever the retry
				// delay.
				List<Long> firstRuns = log.runs()
					.stream()
					.filter((run) -> run.context().attempt() == 1)
					.map(Run::startedNanos)
					.sorted()
					.toList();
				assertThat((firstRuns.get(tasks - 1) - firstRuns.get(0)) / 1_000_000)
					.as("ms from the first first run to the last")
					.isLessThan(1500);
			});
		});
	}

	@Test
	void retriesCountAgainstTheRateLimit() {
		String queue = "flow-rate-retry";
		RunLog log = new RunLog();
		ApplicationContextRunner instance = instances(queue, log, new Concurrency(false),
				"delayed-tasks.queues." + queue + ".rate-limit=4/1s",
				"delayed-tasks.queues." + queue + ".retry.delay=0s",
				"delayed-tasks.queues." + queue + ".retry.jitter=0s", "test.concurrency=8", "test.fail-first=true",
				"test.instance=a");
		instance.run((context) -> {
			await().atMost(Duration.ofSeconds(5))
				.until(() -> new QueueLimits(RateLimit.parse("4/1s"), null).equals(limits(context, queue)));
			IdleDispatcher.waitFor(context, queue);
			List<TaskRequest> requests = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				requests.add(TaskRequest.of(queue, new Job(i)));
			}
			context.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
			await().atMost(Duration.ofSeconds(10)).until(() -> finished(log.runs()) >= 4);
			List<Run> runs = log.runs();
			assertThat(runs).hasSize(8);
			// The 4 first runs fail at once and are ready again at once: their retries
			// wait for the window of the first runs to pass.
			List<Long> leasedAt = runs.stream()
				.map((run) -> run.context().startedAt().toEpochMilli())
				.sorted()
				.toList();
			assertNoWindowHoldsMore(leasedAt, 4, 1000, "first runs and retries in Redis time (ms)");
			long firstRetry = runs.stream()
				.filter((run) -> run.context().attempt() == 2)
				.mapToLong((run) -> run.context().startedAt().toEpochMilli())
				.min()
				.orElseThrow();
			assertThat(firstRetry - leasedAt.get(0)).isGreaterThanOrEqualTo(1000);
			// Held back by the limit, not by a back-off: each retry was ready at once.
			assertThat(runs).filteredOn((run) -> run.context().attempt() == 2)
				.hasSize(4)
				.allSatisfy((run) -> assertThat(
						Duration.between(run.context().dueAt(), run.context().startedAt()).toMillis())
					.as("retry %s ready before it started (ms)", run.context().id())
					.isGreaterThanOrEqualTo(500));
		});
	}

	@Test
	void aScheduleCallHandsNoTaskToAnIdleHandlerPastTheGlobalConcurrencyAndRaisingItWakesTheDispatcher() {
		String queue = "flow-handoff-global";
		RunLog log = new RunLog();
		Concurrency concurrency = new Concurrency(true);
		ApplicationContextRunner instance = instances(queue, log, concurrency,
				"delayed-tasks.queues." + queue + ".global-concurrency=1", "test.concurrency=4", "test.instance=a")
			.withPropertyValues(ONLY_WAKE_TOKENS);
		instance.run((context) -> {
			await().atMost(Duration.ofSeconds(5)).until(() -> new QueueLimits(null, 1).equals(limits(context, queue)));
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			// Each time the dispatcher waits for work with room to spare: without flow
			// control the schedule call would lease the task for it.
			IdleDispatcher.waitFor(context, queue);
			scheduler.schedule(TaskRequest.of(queue, new Job(1)));
			await().atMost(Duration.ofSeconds(5)).until(() -> log.size() == 1);
			IdleDispatcher.waitFor(context, queue);
			scheduler.schedule(TaskRequest.of(queue, new Job(2)));
			Thread.sleep(500);
			assertThat(log.size()).as("runs while the first holds the only slot").isEqualTo(1);
			// The dispatcher blocks on its wake list: the change's wake token alone
			// lets it take the second task, beside the first.
			context.getBean(QueueControl.class).setLimits(queue, new QueueLimits(null, 2));
			await().atMost(Duration.ofSeconds(2)).until(() -> log.size() == 2);
			IdleDispatcher.waitFor(context, queue);
			scheduler.schedule(TaskRequest.of(queue, new Job(3)));
			Thread.sleep(500);
			assertThat(log.size()).as("runs while the first two hold both slots").isEqualTo(2);
			// An ack frees a slot and wakes the dispatcher.
			concurrency.open();
			await().atMost(Duration.ofSeconds(3)).until(() -> finished(log.runs()) == 3);
			assertThat(concurrency.max()).isEqualTo(2);
		});
	}

	@Test
	void aScheduleCallHandsNoTaskToAnIdleHandlerPastTheRateLimitAndLiftingTheLimitRunsIt() {
		String queue = "flow-handoff-rate";
		RunLog log = new RunLog();
		ApplicationContextRunner instance = instances(queue, log, new Concurrency(false),
				"delayed-tasks.queues." + queue + ".rate-limit=1/1h", "test.concurrency=4", "test.instance=a");
		instance.run((context) -> {
			await().atMost(Duration.ofSeconds(5))
				.until(() -> new QueueLimits(RateLimit.parse("1/1h"), null).equals(limits(context, queue)));
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			IdleDispatcher.waitFor(context, queue);
			scheduler.schedule(TaskRequest.of(queue, new Job(1)));
			await().atMost(Duration.ofSeconds(5)).until(() -> finished(log.runs()) == 1);
			IdleDispatcher.waitFor(context, queue);
			scheduler.schedule(TaskRequest.of(queue, new Job(2)));
			Thread.sleep(1500);
			assertThat(log.size()).as("runs while the hour's one start is used").isEqualTo(1);
			long lifted = System.nanoTime();
			context.getBean(QueueControl.class).setLimits(queue, QueueLimits.NONE);
			assertThat(limits(context, queue)).isEqualTo(QueueLimits.NONE);
			// The dispatcher waits for the rate window a second at most.
			await().atMost(Duration.ofMillis(2500)).until(() -> log.size() == 2);
			System.out.println("flow-handoff-rate ran " + (System.nanoTime() - lifted) / 1_000_000
					+ " ms after the limit was lifted");
		});
	}

	private ApplicationContextRunner instances(String queue, RunLog log, Concurrency concurrency,
			String... properties) {
		return this.runner.withBean(RunLog.class, () -> log)
			.withBean(Concurrency.class, () -> concurrency)
			.withPropertyValues("test.queue=" + queue)
			.withPropertyValues(properties);
	}

	private static void runThree(ApplicationContextRunner instances, ThreeInstances test) {
		instances.withPropertyValues("test.instance=a")
			.run((a) -> instances.withPropertyValues("test.instance=b")
				.run((b) -> instances.withPropertyValues("test.instance=c").run((c) -> test.run(a, b, c))));
	}

	private static QueueLimits limits(AssertableApplicationContext context, String queue) {
		return context.getBean(QueueControl.class).limits(queue);
	}

	/**
	 * Assert that no {@code windowMillis} (half-open) holds more than {@code count} of
	 * the sorted times: any {@code count + 1} in a row span at least the window.
	 */
	static void assertNoWindowHoldsMore(List<Long> sortedMillis, int count, long windowMillis, String what) {
		for (int i = 0; i + count < sortedMillis.size(); i++) {
			long span = sortedMillis.get(i + count) - sortedMillis.get(i);
			assertThat(span)
				.as("%s: %d in a row from #%d span %d ms, less than %d ms; all: %s", what, count + 1, i, span,
						windowMillis, relative(sortedMillis))
				.isGreaterThanOrEqualTo(windowMillis);
		}
	}

	private static List<Long> relative(List<Long> sortedMillis) {
		return sortedMillis.stream().map((millis) -> millis - sortedMillis.get(0)).toList();
	}

	/**
	 * How much later than the earliest one each run started on this host after its lease
	 * (Redis time; Redis runs on this host, so on the same wall clock up to a constant).
	 */
	private static List<Long> jitterMillis(List<Run> runs) {
		long wallMinusNanoMillis = System.currentTimeMillis() - System.nanoTime() / 1_000_000;
		List<Long> delays = runs.stream()
			.map((run) -> run.startedNanos() / 1_000_000 + wallMinusNanoMillis
					- run.context().startedAt().toEpochMilli())
			.sorted()
			.toList();
		return delays.stream().map((delay) -> delay - delays.get(0)).toList();
	}

	static void assertOncePerTask(List<Run> runs, Set<TaskId> ids) {
		Map<TaskId, List<Run>> byId = runs.stream().collect(Collectors.groupingBy((run) -> run.context().id()));
		assertThat(byId.keySet()).as("tasks that ran").isEqualTo(ids);
		assertThat(byId.values()).as("runs per task").allSatisfy((each) -> assertThat(each).hasSize(1));
		assertThat(runs).allSatisfy((run) -> assertThat(run.context().deliveryCount()).isEqualTo(1));
	}

	private static List<Run> ofQueue(RunLog log, String queue) {
		return log.runs().stream().filter((run) -> run.context().queue().equals(queue)).toList();
	}

	private static long finished(List<Run> runs) {
		return runs.stream().filter(Run::isFinished).count();
	}

	private static long on(List<Run> runs, String instance) {
		return runs.stream().filter((run) -> run.instance().equals(instance)).count();
	}

	private static void runOne(AssertableApplicationContext context, String queue, RunLog log) {
		int before = log.size();
		context.getBean(DelayedTaskScheduler.class).schedule(TaskRequest.of(queue, new Job(before)));
		await().atMost(Duration.ofSeconds(5)).until(() -> finished(log.runs()) == before + 1);
	}

	/**
	 * Run tasks of an unlimited queue on one instance, each handed over by its schedule
	 * call to that instance's idle dispatcher.
	 */
	private static void warmUp(AssertableApplicationContext context, String queue, RunLog log) {
		DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
		for (int i = 0; i < 10; i++) {
			int before = ofQueue(log, queue).size();
			IdleDispatcher.waitFor(context, queue);
			scheduler.schedule(TaskRequest.of(queue, new Job(-1)));
			await().atMost(Duration.ofSeconds(5)).until(() -> ofQueue(log, queue).size() > before);
		}
	}

	@FunctionalInterface
	interface ThreeInstances {

		void run(AssertableApplicationContext a, AssertableApplicationContext b, AssertableApplicationContext c)
				throws Throwable;

	}

	record Job(int index) {
	}

	/**
	 * Handlers running at once, on every instance of a test together, and a gate that
	 * holds them while closed.
	 */
	static final class Concurrency {

		private final AtomicInteger running = new AtomicInteger();

		private final AtomicInteger max = new AtomicInteger();

		private final CountDownLatch gate;

		Concurrency(boolean gated) {
			this.gate = new CountDownLatch(gated ? 1 : 0);
		}

		void enter() {
			int now = this.running.incrementAndGet();
			this.max.accumulateAndGet(now, Math::max);
		}

		void exit() {
			this.running.decrementAndGet();
		}

		void pass() throws InterruptedException {
			this.gate.await(10, TimeUnit.SECONDS);
		}

		void open() {
			this.gate.countDown();
		}

		int max() {
			return this.max.get();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FlowHandler {

		private final RunLog log;

		private final Concurrency concurrency;

		private final String instance;

		private final long sleepMillis;

		private final boolean failFirst;

		FlowHandler(RunLog log, Concurrency concurrency, Environment environment) {
			this.log = log;
			this.concurrency = concurrency;
			this.instance = environment.getRequiredProperty("test.instance");
			this.sleepMillis = environment.getProperty("test.sleep-ms", Long.class, 0L);
			this.failFirst = environment.getProperty("test.fail-first", Boolean.class, false);
		}

		@DelayedTaskHandler(queue = "${test.queue}", concurrency = "${test.concurrency:4}")
		void handle(Job job, TaskContext context) throws InterruptedException {
			this.concurrency.enter();
			try {
				Run run = this.log.started(this.instance, context, job);
				this.concurrency.pass();
				if (this.sleepMillis > 0) {
					Thread.sleep(this.sleepMillis);
				}
				if (this.failFirst && context.attempt() == 1) {
					throw new IllegalStateException("The first run of task " + job.index() + " fails");
				}
				run.finished();
			}
			finally {
				this.concurrency.exit();
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class WarmUpHandler {

		private final RunLog log;

		private final String instance;

		WarmUpHandler(RunLog log, Environment environment) {
			this.log = log;
			this.instance = environment.getRequiredProperty("test.instance");
		}

		@DelayedTaskHandler(queue = "${test.queue}-warm", concurrency = "${test.concurrency}")
		void handle(Job job, TaskContext context) {
			this.log.started(this.instance, context, job).finished();
		}

	}

}

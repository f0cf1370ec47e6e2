package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.Job;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Flow control: a held-back queue must never stall and the limits must hold, across
 * crashes, graceful stops, Errors from handlers, run-time changes and delayed tasks
 * falling due together on three instances. Idle dispatchers block for 20 s, so only the
 * wake tokens the scripts push can start the next task in time.
 */
@WithRedis
class FlowControlLivenessIntegrationTests {

	private static final String[] LONG_BLOCK = { "delayed-tasks.worker.block-timeout=20s",
			"delayed-tasks.worker.timer-ttl=30s" };

	private final ApplicationContextRunner runner;

	FlowControlLivenessIntegrationTests(TestRedis redis) {
		this.runner = ShortLeases.runner(redis).withUserConfiguration(FailingFirstHandler.class);
	}

	private ApplicationContextRunner instances(String queue, RunLog log, Gate gate, String... properties) {
		return this.runner.withBean(RunLog.class, () -> log)
			.withBean(Gate.class, () -> gate)
			.withPropertyValues("test.queue=" + queue)
			.withPropertyValues(properties);
	}

	/**
	 * "after a crash, its lease expired and the timer owner reaped it (lease-duration
	 * plus reap-grace)" and "Each script that ends a lease (..., and the reaper) pushes
	 * one wake token per freed slot". A crashed instance (a claim no one heartbeats,
	 * lease 6 s) holds the only slot; two live instances must take over at lease + grace.
	 */
	@Test
	void theSlotOfACrashedInstanceIsFreedWhenItsLeaseIsReapedAndTheQueueFlowsOn() {
		String queue = "flow-crash";
		RunLog log = new RunLog();
		Gate gate = new Gate(false);
		String cap = "delayed-tasks.queues." + queue + ".global-concurrency=1";
		// The "crashed" instance: a producer (its handler serves another queue) whose
		// claim leases the first task for 6 s and which then vanishes.
		long[] claimedAt = new long[1];
		this.runner.withBean(RunLog.class, () -> log)
			.withBean(Gate.class, () -> gate)
			.withPropertyValues("test.queue=other", "test.instance=dead", "delayed-tasks.worker.lease-duration=6s")
			.run((dead) -> {
				dead.getBean(QueueControl.class).setLimits(queue, new QueueLimits(null, 1));
				DelayedTaskScheduler scheduler = dead.getBean(DelayedTaskScheduler.class);
				List<TaskRequest> requests = new ArrayList<>();
				for (int i = 0; i < 4; i++) {
					requests.add(TaskRequest.of(queue, new Job(i)));
				}
				scheduler.scheduleAll(requests);
				ClaimBatch batch = dead.getBean(TaskStore.class).claim(queue, 4, "deadbeef.1");
				assertThat(batch.tasks()).hasSize(1);
				claimedAt[0] = batch.now();
			});
		instances(queue, log, gate, cap, "test.sleep-ms=50").withPropertyValues(LONG_BLOCK)
			.withPropertyValues("test.instance=a")
			.run((a) -> instances(queue, log, gate, cap, "test.sleep-ms=50").withPropertyValues(LONG_BLOCK)
				.withPropertyValues("test.instance=b")
				.run((b) -> {
					await().atMost(Duration.ofSeconds(20)).until(() -> log.finishedCount() >= 4);
					List<Long> leased = log.runs()
						.stream()
						.map((run) -> run.context().startedAt().toEpochMilli() - claimedAt[0])
						.sorted()
						.toList();
					assertThat(leased.get(0)).as("first lease after the crashed claim (ms)")
						.isGreaterThanOrEqualTo(6000);
					assertThat(leased.get(0)).as("first lease after the crashed claim (ms)").isLessThan(6500 + 2000);
					assertThat(leased.get(3)).as("last lease after the crashed claim (ms)").isLessThan(6500 + 4000);
					assertThat(gate.max()).isEqualTo(1);
				}));
	}

	/**
	 * "A lease counts from its claim until ... the task is released at a graceful stop"
	 * and "Each script that ends a lease (..., release, ...) pushes one wake token". The
	 * instance holding the only slot stops gracefully; the other, blocked on its wake
	 * list for 20 s, must start the next task at once.
	 */
	@Test
	void aGracefulStopOfTheSlotHolderWakesTheOtherInstance() {
		String queue = "flow-stop";
		RunLog log = new RunLog();
		Gate gate = new Gate(true);
		String cap = "delayed-tasks.queues." + queue + ".global-concurrency=1";
		ApplicationContextRunner a = instances(queue, log, gate, cap, "test.instance=a").withPropertyValues(LONG_BLOCK);
		ApplicationContextRunner b = instances(queue, log, gate, cap, "test.instance=b").withPropertyValues(LONG_BLOCK);
		a.run((first) -> {
			await().atMost(Duration.ofSeconds(5))
				.until(() -> new QueueLimits(null, 1).equals(first.getBean(QueueControl.class).limits(queue)));
			List<TaskRequest> requests = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				requests.add(TaskRequest.of(queue, new Job(i)));
			}
			first.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
			await().atMost(Duration.ofSeconds(5)).until(() -> log.size() == 1);
			b.run((second) -> {
				Thread.sleep(1500);
				assertThat(log.size()).as("runs while the first holds the only slot").isEqualTo(1);
				long stopping = System.nanoTime();
				first.close();
				long closed = System.nanoTime();
				await().atMost(Duration.ofSeconds(25)).until(() -> !log.on("b").isEmpty());
				Run next = log.on("b").get(0);
				gate.open();
				await().atMost(Duration.ofSeconds(10)).until(() -> log.finishedCount() >= 4);
				assertThat((next.startedNanos() - closed) / 1_000_000).as("ms from a's stop to b's next start")
					.isLessThan(3000);
				assertThat(gate.max()).isEqualTo(1);
			});
		});
	}

	/**
	 * "a failed run frees its slot", with Errors: AssertionError and StackOverflowError
	 * from the handler, under a global concurrency of 1 and 20 s blocks.
	 */
	@Test
	void errorsFromHandlersFreeTheirSlotsAtOnce() {
		String queue = "flow-error";
		RunLog log = new RunLog();
		Gate gate = new Gate(false);
		instances(queue, log, gate, "delayed-tasks.queues." + queue + ".global-concurrency=1",
				"delayed-tasks.queues." + queue + ".retry.delay=0s",
				"delayed-tasks.queues." + queue + ".retry.jitter=0s", "test.instance=a", "test.throw-first=true",
				"test.sleep-ms=20")
			.withPropertyValues(LONG_BLOCK)
			.run((context) -> {
				await().atMost(Duration.ofSeconds(5))
					.until(() -> new QueueLimits(null, 1).equals(context.getBean(QueueControl.class).limits(queue)));
				List<TaskRequest> requests = new ArrayList<>();
				for (int i = 0; i < 6; i++) {
					requests.add(TaskRequest.of(queue, new Job(i)));
				}
				long scheduled = System.nanoTime();
				context.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
				await().atMost(Duration.ofSeconds(25)).until(() -> log.finishedCount() >= 6);
				long ms = (System.nanoTime() - scheduled) / 1_000_000;
				assertThat(ms).isLessThan(5000);
				assertThat(gate.max()).isEqualTo(1);
			});
	}

	/**
	 * "A change wakes idle dispatchers": three instances of concurrency 1, global
	 * concurrency 1 with a long-running task; raising it to 3 must start two more within
	 * a second, although only one wake token is pushed.
	 */
	@Test
	void raisingTheGlobalConcurrencyWakesEveryIdleInstance() {
		String queue = "flow-raise";
		RunLog log = new RunLog();
		Gate gate = new Gate(true);
		String[] props = { "delayed-tasks.queues." + queue + ".global-concurrency=1", "test.concurrency=1" };
		ApplicationContextRunner each = instances(queue, log, gate, props).withPropertyValues(LONG_BLOCK);
		each.withPropertyValues("test.instance=a")
			.run((a) -> each.withPropertyValues("test.instance=b")
				.run((b) -> each.withPropertyValues("test.instance=c").run((c) -> {
					await().atMost(Duration.ofSeconds(5))
						.until(() -> new QueueLimits(null, 1).equals(c.getBean(QueueControl.class).limits(queue)));
					Thread.sleep(500);
					List<TaskRequest> requests = new ArrayList<>();
					for (int i = 0; i < 10; i++) {
						requests.add(TaskRequest.of(queue, new Job(i)));
					}
					a.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
					await().atMost(Duration.ofSeconds(5)).until(() -> log.size() == 1);
					Thread.sleep(500);
					assertThat(log.size()).isEqualTo(1);
					long changed = System.nanoTime();
					b.getBean(QueueControl.class).setLimits(queue, new QueueLimits(null, 3));
					try {
						await().atMost(Duration.ofSeconds(3)).until(() -> log.size() == 3);
					}
					finally {
						gate.open();
					}
					await().atMost(Duration.ofSeconds(15)).until(() -> log.finishedCount() >= 10);
				})));
	}

	/**
	 * "no span of a rate limit's window holds more leases than its count", through the
	 * timer owner's hand-off (promote.lua) and claims on three instances, with tasks
	 * falling due together and every first run failing with an immediate retry.
	 */
	@Test
	void aRateLimitHoldsForDelayedTasksFallingDueTogetherWithRetriesOnThreeInstances() {
		String queue = "flow-due";
		RunLog log = new RunLog();
		Gate gate = new Gate(false);
		int tasks = 30;
		int count = 5;
		ApplicationContextRunner each = instances(queue, log, gate,
				"delayed-tasks.queues." + queue + ".rate-limit=5/500ms",
				"delayed-tasks.queues." + queue + ".retry.delay=0s",
				"delayed-tasks.queues." + queue + ".retry.jitter=0s", "test.concurrency=4", "test.fail-first=true");
		each.withPropertyValues("test.instance=a")
			.run((a) -> each.withPropertyValues("test.instance=b")
				.run((b) -> each.withPropertyValues("test.instance=c").run((c) -> {
					await().atMost(Duration.ofSeconds(5))
						.until(() -> new QueueLimits(RateLimit.parse("5/500ms"), null)
							.equals(c.getBean(QueueControl.class).limits(queue)));
					List<TaskRequest> requests = new ArrayList<>();
					for (int round = 0; round < 3; round++) {
						for (int i = 0; i < tasks / 3; i++) {
							requests.add(TaskRequest.of(queue, new Job(round * 100 + i))
								.delay(Duration.ofMillis(1500 + round * 700)));
						}
					}
					b.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
					await().atMost(Duration.ofSeconds(30)).until(() -> log.finishedCount() >= tasks);
					List<Long> leasedAt = log.runs()
						.stream()
						.map((run) -> run.context().startedAt().toEpochMilli())
						.sorted()
						.toList();
					assertThat(leasedAt).hasSize(2 * tasks);
					long first = leasedAt.get(0);
					double span = (leasedAt.get(leasedAt.size() - 1) - first) / 1000.0;
					for (int i = 0; i + count < leasedAt.size(); i++) {
						assertThat(leasedAt.get(i + count) - leasedAt.get(i))
							.as("%d leases in a row from #%d", count + 1, i)
							.isGreaterThanOrEqualTo(500);
					}
				})));
	}

	/** Handlers running at once, a gate, and the most at once. */
	static final class Gate {

		private final AtomicInteger running = new AtomicInteger();

		private final AtomicInteger max = new AtomicInteger();

		private final CountDownLatch latch;

		Gate(boolean closed) {
			this.latch = new CountDownLatch(closed ? 1 : 0);
		}

		void enter() {
			this.max.accumulateAndGet(this.running.incrementAndGet(), Math::max);
		}

		void exit() {
			this.running.decrementAndGet();
		}

		void pass() throws InterruptedException {
			this.latch.await(30, TimeUnit.SECONDS);
		}

		void open() {
			this.latch.countDown();
		}

		int max() {
			return this.max.get();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FailingFirstHandler {

		private final RunLog log;

		private final Gate gate;

		private final String instance;

		private final long sleepMillis;

		private final boolean failFirst;

		private final boolean throwFirst;

		FailingFirstHandler(RunLog log, Gate gate, Environment environment) {
			this.log = log;
			this.gate = gate;
			this.instance = environment.getRequiredProperty("test.instance");
			this.sleepMillis = environment.getProperty("test.sleep-ms", Long.class, 0L);
			this.failFirst = environment.getProperty("test.fail-first", Boolean.class, false);
			this.throwFirst = environment.getProperty("test.throw-first", Boolean.class, false);
		}

		@DelayedTaskHandler(queue = "${test.queue}", concurrency = "${test.concurrency:4}")
		void handle(Job job, TaskContext context) throws InterruptedException {
			this.gate.enter();
			try {
				Run run = this.log.started(this.instance, context, job);
				this.gate.pass();
				if (this.sleepMillis > 0) {
					Thread.sleep(this.sleepMillis);
				}
				if (this.failFirst && context.attempt() == 1) {
					throw new IllegalStateException("The first run of task " + job.index() + " fails");
				}
				if (this.throwFirst && context.attempt() == 1) {
					if (job.index() % 2 == 0) {
						// Not an OutOfMemoryError: the library rethrows it (on purpose)
						// and it ends the
						// forked test JVM.
						throw new AssertionError("the first run of task " + job.index());
					}
					throw new StackOverflowError("the first run of task " + job.index());
				}
				run.finished();
			}
			finally {
				this.gate.exit();
			}
		}

	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.internal.worker.CrashTestWorker.CrashJob;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A handler that fails at once (its downstream is down) on a large backlog: an instance
 * holds no more leases than its concurrency plus one claim, another instance on the queue
 * gets its share of the runs, and each retry is due its back-off after the failure, not
 * after a queue of unrecorded outcomes.
 */
@WithRedis(privateServer = true)
class FailFastBackPressureIntegrationTests {

	private static final String QUEUE = "fail-fast";

	private static final int TASKS = 20_000;

	private static final int CONCURRENCY = 4;

	/** {@code delayed-tasks.worker.max-claim} by default. */
	private static final int MAX_CLAIM = 32;

	private static final Duration RETRY_DELAY = Duration.ofSeconds(1);

	private static final Duration PHASE = Duration.ofSeconds(5);

	/** The child prints the lines of one task in about this many. */
	private static final int REPORT_EVERY = 50;

	private static final String FAILURES_LOGGER = "dev.delayedtasks.failures";

	private static final String[] RETRY = { "delayed-tasks.retry.max-retries=50",
			"delayed-tasks.retry.delay=" + RETRY_DELAY.toMillis() + "ms", "delayed-tasks.retry.multiplier=1",
			"delayed-tasks.retry.jitter=0ms" };

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	FailFastBackPressureIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis);
	}

	@Test
	void fastFailingHandlersHoldBoundedLeasesShareTheQueueAndRetryOnTime() throws Exception {
		List<String> childProperties = new ArrayList<>(
				List.of("crash.mode=fail-fast", "crash.report-every=" + REPORT_EVERY,
						"logging.level.dev.delayedtasks.worker=WARN", "logging.level.dev.delayedtasks.failures=WARN"));
		childProperties.addAll(List.of(RETRY));
		try (ChildWorker child = ChildWorker.start("fail-fast", this.redis, QUEUE, CONCURRENCY,
				childProperties.toArray(String[]::new))) {
			// The producer stores each task's attempts (max-retries + 1).
			this.runner.withPropertyValues("delayed-tasks.worker.enabled=false")
				.withPropertyValues(RETRY)
				.run((producer) -> {
					DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
					RedisQueueStats stats = producer.getBean(RedisQueueStats.class);
					String leaseKey = PartitionKeys.of(this.redis.keyPrefix(), QUEUE).lease();
					long aloneMax;
					Window both;
					try (LeaseSampler leases = new LeaseSampler(producer.getBean(StringRedisTemplate.class),
							leaseKey)) {
						schedule(scheduler);
						// The child alone on the backlog.
						long aloneFrom = System.nanoTime();
						Thread.sleep(PHASE.toMillis());
						aloneMax = leases.max(aloneFrom, System.nanoTime());
						both = withSecondInstance(stats, leases);
					}
					List<Long> childLags = childRetryLags(child);
					List<Long> lags = new ArrayList<>(childLags);
					lags.addAll(both.secondLags());
					System.out.println("fail-fast: lease set max alone=" + aloneMax + " with two instances="
							+ both.leaseMax() + "; runs while both ran: " + both.claimed() + " claimed, "
							+ both.secondRuns() + " by the second instance; retry due - failure (ms): child "
							+ describe(childLags) + ", second " + describe(both.secondLags()));

					SoftAssertions softly = new SoftAssertions();
					softly.assertThat(aloneMax)
						.as("leases held by one instance (concurrency %d + one claim of %d)", CONCURRENCY, MAX_CLAIM)
						.isLessThanOrEqualTo(CONCURRENCY + MAX_CLAIM);
					softly.assertThat(both.leaseMax())
						.as("leases held by two instances (each concurrency %d + one claim of %d)", CONCURRENCY,
								MAX_CLAIM)
						.isLessThanOrEqualTo(2 * (CONCURRENCY + MAX_CLAIM));
					softly.assertThat(both.claimed()).as("runs while both instances ran").isPositive();
					softly.assertThat((double) both.secondRuns())
						.as("runs of the second instance (%d) out of all %d while both ran", both.secondRuns(),
								both.claimed())
						.isGreaterThanOrEqualTo(both.claimed() * 0.25);
					softly.assertThat(childLags)
						.as("recorded retries of the child's sampled failures")
						.hasSizeGreaterThanOrEqualTo(10);
					softly.assertThat(lags.stream().mapToLong(Long::longValue).max().orElse(0))
						.as("latest retry due time minus failure time (back-off %s + 1 s slack) of %s", RETRY_DELAY,
								describe(lags))
						.isLessThanOrEqualTo(RETRY_DELAY.plusSeconds(1).toMillis());
					softly.assertAll();
				});
		}
	}

	private static void schedule(DelayedTaskScheduler scheduler) {
		long scheduling = System.nanoTime();
		List<TaskRequest> batch = new ArrayList<>();
		for (int i = 0; i < TASKS; i++) {
			batch.add(TaskRequest.of(QUEUE, new CrashJob(i, 0)));
			if (batch.size() == 2000) {
				scheduler.scheduleAll(batch);
				batch.clear();
			}
		}
		System.out.println("fail-fast: scheduled " + TASKS + " tasks in "
				+ Duration.ofNanos(System.nanoTime() - scheduling).toMillis() + " ms");
	}

	/**
	 * Run a second instance on the queue, in this JVM, for a phase.
	 */
	private Window withSecondInstance(RedisQueueStats stats, LeaseSampler leases) {
		RetryLog second = new RetryLog();
		AtomicReference<Window> window = new AtomicReference<>();
		// A log line per retry would flood the output.
		LoggingSystem logging = LoggingSystem.get(getClass().getClassLoader());
		logging.setLogLevel(FAILURES_LOGGER, LogLevel.WARN);
		try {
			this.runner.withPropertyValues(RETRY)
				.withBean(RetryLog.class, () -> second)
				.withUserConfiguration(FailingInstance.class)
				.run((worker) -> {
					long claimedBefore = stats.read(QUEUE).counter("claimed");
					int secondBefore = second.runs();
					long from = System.nanoTime();
					Thread.sleep(PHASE.toMillis());
					long leaseMax = leases.max(from, System.nanoTime());
					window.set(new Window(leaseMax, stats.read(QUEUE).counter("claimed") - claimedBefore,
							second.runs() - secondBefore, second.lags()));
				});
		}
		finally {
			logging.setLogLevel(FAILURES_LOGGER, null);
		}
		assertThat(window.get()).as("the second instance's phase").isNotNull();
		return window.get();
	}

	/**
	 * Due time of each retry the child recorded minus the time its handler failed, in
	 * milliseconds.
	 */
	private static List<Long> childRetryLags(ChildWorker child) {
		Map<String, Long> failedAt = new HashMap<>();
		for (String[] failed : child.events("@@FAILED ")) {
			failedAt.put(failed[0] + "#" + failed[1], Long.parseLong(failed[2]));
		}
		List<Long> lags = new ArrayList<>();
		for (String[] retried : child.events("@@RETRIED ")) {
			Long failed = failedAt.get(retried[0] + "#" + retried[1]);
			if (failed != null) {
				lags.add(Long.parseLong(retried[2]) - failed);
			}
		}
		return lags;
	}

	private static String describe(List<Long> values) {
		return RunLog.describe(values.stream().sorted().toList());
	}

	/**
	 * What happened while two instances ran: the most leases held, the tasks claimed, the
	 * second instance's runs and its retries' due time minus failure time.
	 */
	private record Window(long leaseMax, long claimed, int secondRuns, List<Long> secondLags) {
	}

	/**
	 * Samples the size of a queue's lease set every 10 ms on a thread of its own.
	 */
	private static final class LeaseSampler implements AutoCloseable {

		private final StringRedisTemplate template;

		private final String leaseKey;

		private final ConcurrentLinkedQueue<long[]> samples = new ConcurrentLinkedQueue<>();

		private final Thread thread;

		private volatile boolean running = true;

		LeaseSampler(StringRedisTemplate template, String leaseKey) {
			this.template = template;
			this.leaseKey = leaseKey;
			this.thread = new Thread(this::sample, "lease-sampler");
			this.thread.setDaemon(true);
			this.thread.start();
		}

		private void sample() {
			while (this.running) {
				Long size = this.template.opsForZSet().zCard(this.leaseKey);
				this.samples.add(new long[] { System.nanoTime(), (size != null) ? size : 0 });
				try {
					Thread.sleep(10);
				}
				catch (InterruptedException ex) {
					return;
				}
			}
		}

		long max(long fromNanos, long toNanos) {
			long max = -1;
			int count = 0;
			for (long[] sample : this.samples) {
				if (sample[0] - fromNanos >= 0 && toNanos - sample[0] >= 0) {
					max = Math.max(max, sample[1]);
					count++;
				}
			}
			assertThat(count).as("lease set samples").isGreaterThan(50);
			return max;
		}

		@Override
		public void close() throws InterruptedException {
			this.running = false;
			this.thread.join(2000);
		}

	}

	/**
	 * Runs and recorded retries of the second instance: the time each attempt failed and
	 * the retry's due time minus it.
	 */
	static final class RetryLog implements DelayedTaskListener {

		private final AtomicInteger runs = new AtomicInteger();

		private final Map<String, Long> failedAt = new ConcurrentHashMap<>();

		private final ConcurrentLinkedQueue<Long> lags = new ConcurrentLinkedQueue<>();

		void failed(TaskContext context) {
			this.runs.incrementAndGet();
			this.failedAt.put(context.id().value() + "#" + context.attempt(), System.currentTimeMillis());
		}

		@Override
		public void retried(TaskContext context, Throwable failure, Instant nextRunAt) {
			Long failed = this.failedAt.remove(context.id().value() + "#" + context.attempt());
			if (failed != null) {
				this.lags.add(nextRunAt.toEpochMilli() - failed);
			}
		}

		int runs() {
			return this.runs.get();
		}

		List<Long> lags() {
			return List.copyOf(this.lags);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FailingInstance {

		private final RetryLog log;

		FailingInstance(RetryLog log) {
			this.log = log;
		}

		@DelayedTaskHandler(queue = QUEUE, concurrency = "" + CONCURRENCY)
		void handle(CrashJob job, TaskContext context) {
			this.log.failed(context);
			throw new IllegalStateException("Downstream of task " + context.id() + " is down");
		}

	}

}

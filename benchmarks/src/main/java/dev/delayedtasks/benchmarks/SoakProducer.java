package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.benchmarks.SoakPlan.Cancel;
import dev.delayedtasks.benchmarks.SoakTask.Kind;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * The soak's producer: schedules a mix of tasks at a steady rate on a thread of its own,
 * each with an id chosen before the call, and cancels the tasks of kind
 * {@link Kind#CANCEL} half-way to their due time. Every call and its result go to the
 * {@link SoakPlan}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class SoakProducer {

	private static final Log logger = LogFactory.getLog(SoakProducer.class);

	/**
	 * Tasks to be cancelled are due at least this late, so that the cancel comes first.
	 */
	private static final Duration CANCEL_LEAD = Duration.ofSeconds(2);

	/**
	 * A cancel that runs this close to the due time is skipped: it would race the run.
	 */
	private static final Duration CANCEL_MARGIN = Duration.ofMillis(500);

	private static final int MAX_WORK_MILLIS = 200;

	private final DelayedTaskScheduler scheduler;

	private final SoakPlan plan;

	private final BenchmarkProperties.Soak settings;

	private final SplittableRandom random;

	private final ScheduledExecutorService cancels;

	private final Thread thread;

	private volatile boolean stopped;

	SoakProducer(DelayedTaskScheduler scheduler, SoakPlan plan, BenchmarkProperties.Soak settings, long seed) {
		this.scheduler = scheduler;
		this.plan = plan;
		this.settings = settings;
		this.random = new SplittableRandom(seed);
		// Daemons: a soak that fails must not be kept alive by its producer.
		CustomizableThreadFactory threads = new CustomizableThreadFactory("soak-producer-");
		threads.setDaemon(true);
		this.cancels = Executors.newSingleThreadScheduledExecutor(threads);
		this.thread = threads.newThread(this::produce);
	}

	void start() {
		this.thread.start();
	}

	/**
	 * Stop scheduling and wait until every planned cancel was sent.
	 */
	void stop() {
		this.stopped = true;
		try {
			this.thread.join();
			this.cancels.shutdown();
			// Delayed cancels still run after shutdown; they all fall due within the
			// longest delay, plus a Redis outage they may have to wait out.
			if (!this.cancels.awaitTermination(this.settings.maxDelay().plus(CANCEL_LEAD).toMillis() + 120_000,
					TimeUnit.MILLISECONDS)) {
				logger.warn("Soak: planned cancels still pending");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while stopping the soak producer", ex);
		}
	}

	private void produce() {
		long periodNanos = (long) (1e9 / this.settings.rate());
		long next = System.nanoTime();
		for (int seq = 0; !this.stopped; seq++) {
			long wait = next - System.nanoTime();
			if (wait > 0) {
				LockSupport.parkNanos(wait);
			}
			// After a stall (a Redis outage blocks the calls) the rate resumes instead of
			// catching up with a burst.
			next = Math.max(next + periodNanos, System.nanoTime() - periodNanos);
			produceOne(seq);
		}
	}

	private void produceOne(int seq) {
		Kind kind = kind(this.random.nextInt(100));
		long maxDelay = this.settings.maxDelay().toMillis();
		Duration delay = (kind == Kind.CANCEL) ? CANCEL_LEAD.plusMillis(this.random.nextLong(maxDelay + 1))
				: Duration.ofMillis(this.random.nextLong(maxDelay + 1));
		TaskId id = TaskId.generate();
		TaskRequest request = TaskRequest.of(Queues.SOAK, new SoakTask(seq, kind, this.random.nextInt(MAX_WORK_MILLIS)))
			.id(id)
			.delay(delay);
		long scheduledAt = System.nanoTime();
		try {
			this.scheduler.schedule(request);
			this.plan.scheduled(id, kind);
		}
		catch (RuntimeException ex) {
			this.plan.scheduleFailed(id, kind);
			logger.warn("Soak: scheduling task " + id + " failed: " + ex.getMessage());
			return;
		}
		if (kind == Kind.CANCEL) {
			long dueAt = scheduledAt + delay.toNanos();
			this.cancels.schedule(() -> cancel(id, dueAt), delay.toNanos() / 2, TimeUnit.NANOSECONDS);
		}
	}

	private void cancel(TaskId id, long dueAtNanos) {
		if (System.nanoTime() > dueAtNanos - CANCEL_MARGIN.toNanos()) {
			// Late (the cancel thread waited out a Redis outage): leave the task to run.
			return;
		}
		try {
			this.plan.cancelled(id, this.scheduler.cancel(Queues.SOAK, id) ? Cancel.CANCELLED : Cancel.REFUSED);
		}
		catch (RuntimeException ex) {
			this.plan.cancelled(id, Cancel.FAILED);
			logger.warn("Soak: cancelling task " + id + " failed: " + ex.getMessage());
		}
	}

	/**
	 * The mix: 55 % succeed, 15 % fail once, 10 % always fail, 20 % are cancelled.
	 * @param percentile a number from 0 to 99
	 * @return what the task does
	 */
	private static Kind kind(int percentile) {
		if (percentile < 55) {
			return Kind.SUCCEED;
		}
		if (percentile < 70) {
			return Kind.FAIL_ONCE;
		}
		if (percentile < 80) {
			return Kind.ALWAYS_FAIL;
		}
		return Kind.CANCEL;
	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.delayedtasks.internal.store.RedisQueueHistory;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * Records the counters of the queues this instance handles into their history
 * ({@link RedisQueueHistory}), with the lateness of the runs it started since
 * ({@link LatenessRecorder}), every {@link #INTERVAL}, on a daemon thread of its own (a
 * Redis call must not hold up the task scheduler's timeouts). Twice a minute, so that a
 * late or failed call still leaves a sample in every minute; the script keeps one per
 * minute whoever calls it. A failure is logged at most once per outage and never stops
 * the recording.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public final class QueueHistoryRecorder implements SmartLifecycle {

	/**
	 * How often the counters are offered to the history.
	 */
	public static final Duration INTERVAL = Duration.ofSeconds(30);

	private static final Duration FIRST_RECORD = Duration.ofSeconds(1);

	private static final Log logger = LogFactory.getLog(QueueHistoryRecorder.class);

	private final RedisQueueHistory history;

	private final Supplier<Set<String>> handledQueues;

	private final LatenessRecorder lateness;

	private @Nullable ScheduledExecutorService executor;

	private volatile boolean failing;

	/**
	 * Create the recorder.
	 * @param history the history
	 * @param handledQueues the queues this instance handles now
	 * @param lateness the lateness of the runs this instance started, taken to Redis with
	 * each record
	 */
	public QueueHistoryRecorder(RedisQueueHistory history, Supplier<Set<String>> handledQueues,
			LatenessRecorder lateness) {
		this.history = history;
		this.handledQueues = handledQueues;
		this.lateness = lateness;
	}

	@Override
	public synchronized void start() {
		if (this.executor != null) {
			return;
		}
		ScheduledExecutorService started = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "delayed-tasks-history");
			thread.setDaemon(true);
			return thread;
		});
		// The handlers start after this (a later phase): the first record a moment later
		// finds them.
		started.scheduleWithFixedDelay(this::recordAll, FIRST_RECORD.toMillis(), INTERVAL.toMillis(),
				TimeUnit.MILLISECONDS);
		this.executor = started;
	}

	@Override
	public synchronized void stop() {
		if (this.executor != null) {
			this.executor.shutdownNow();
			this.executor = null;
			// The handlers have stopped (a later phase stops first): the lateness of the
			// runs they started since the last record goes now, so a graceful stop loses
			// none of it, where a crash loses at most an interval's worth.
			recordAll();
		}
	}

	/**
	 * Stops after the handlers, so that the last record counts the runs they finished
	 * while stopping.
	 * @return the phase
	 */
	@Override
	public int getPhase() {
		return DelayedTaskHandlerRegistry.PHASE - 1;
	}

	@Override
	public synchronized boolean isRunning() {
		return this.executor != null;
	}

	/**
	 * Offer every handled queue's counters to the history once.
	 */
	void recordAll() {
		boolean failed = false;
		Set<String> queues;
		try {
			queues = new TreeSet<>(this.handledQueues.get());
		}
		catch (RuntimeException ex) {
			queues = new TreeSet<>();
			failed = reportFailure("the handled queues", ex);
		}
		// Also the queues whose runs were counted but that are no longer handled here (a
		// stopped handler, the last record of a graceful stop).
		queues.addAll(this.lateness.queues());
		for (String queue : queues) {
			// One queue's failure (its master away, bad data) must not leave the others
			// unrecorded.
			long[] started = this.lateness.take(queue);
			try {
				this.history.record(queue, started);
			}
			catch (RuntimeException | Error ex) {
				// Counted again with the next record; a timeout that did reach Redis
				// counts them twice, which a percentile barely notices.
				this.lateness.giveBack(queue, started);
				failed = reportFailure("queue '" + queue + "'", ex);
			}
		}
		if (!failed && this.failing) {
			logger.info("Recording queue history works again");
			this.failing = false;
		}
	}

	private boolean reportFailure(String what, Throwable ex) {
		if (!this.failing) {
			logger.warn("Recording the history of " + what + " failed; retrying every " + INTERVAL.toSeconds() + " s: "
					+ ex);
			this.failing = true;
		}
		return true;
	}

}

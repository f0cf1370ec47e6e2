package dev.delayedtasks.internal.admin;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.StoreSettings;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Keeps the dead letters of every known queue within their retention
 * ({@code delayed-tasks.dead-letter.retention} and {@code .max-count}) on a schedule, on
 * a daemon thread of its own. Dead-lettering a failed task trims its queue too, but dead
 * letters also come from expired leases ({@code max-deliveries}) and corrupt data, and a
 * queue that stopped failing is never trimmed by a failure again: this is what deletes
 * them.
 * <p>
 * Each round trims every queue in the index with bounded work: script calls of at most
 * {@link StoreSettings#trimLimit()} deletions, at most {@value #MAX_CALLS_PER_QUEUE} of
 * them per queue, so a huge backlog is worked off over several rounds without holding
 * Redis. Trimming is idempotent, so every instance may run it: a producer-only instance
 * does too, which keeps the dead letters bounded when no worker runs. A round that cannot
 * reach Redis is logged once and tried again at the next one; it never fails the
 * application.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class DeadLetterRetention implements SmartLifecycle {

	/** How often every queue is trimmed by default. */
	public static final Duration DEFAULT_INTERVAL = Duration.ofMinutes(1);

	/** The most trim script calls per queue and round. */
	static final int MAX_CALLS_PER_QUEUE = 100;

	private static final Log logger = LogFactory.getLog(DeadLetterRetention.class);

	private final RedisDeadLetters deadLetters;

	private final QueueIndex index;

	private final Duration interval;

	/** The queues whose last trim failed, with why: logged once each. */
	private final Map<String, String> failingQueues = new ConcurrentHashMap<>();

	/** Held by a round: one runs at a time, whether scheduled or called directly. */
	private final Object round = new Object();

	/** Rounds that could not reach Redis in a row; the first one is logged. */
	private int failedRounds;

	private volatile boolean stopping;

	private @Nullable ScheduledExecutorService scheduler;

	/**
	 * Create the retention.
	 * @param deadLetters trims one queue
	 * @param index the known queues
	 * @param interval how long between two rounds
	 */
	public DeadLetterRetention(RedisDeadLetters deadLetters, QueueIndex index, Duration interval) {
		if (interval.isNegative() || interval.isZero()) {
			throw new IllegalArgumentException(
					"The dead-letter retention interval must be positive, but is " + interval + ": use for example 1m");
		}
		this.deadLetters = deadLetters;
		this.index = index;
		this.interval = interval;
	}

	/**
	 * Trim every known queue once, with bounded work per queue. Never throws: a failure
	 * is logged, and the next round tries again.
	 * @return how many dead letters were deleted
	 */
	public long trimAll() {
		synchronized (this.round) {
			return trimEveryQueue();
		}
	}

	private long trimEveryQueue() {
		long deleted = 0;
		try {
			for (String queue : this.index.queues()) {
				if (this.stopping) {
					break;
				}
				deleted += trim(queue);
			}
			if (this.failedRounds > 0) {
				logger
					.info("Trimming delayed-tasks dead letters again after " + this.failedRounds + " failed round(s)");
				this.failedRounds = 0;
			}
		}
		catch (RuntimeException ex) {
			if (this.stopping) {
				return deleted; // interrupted by stop(), not a Redis failure
			}
			if (this.failedRounds++ == 0) {
				logger.warn("Could not trim delayed-tasks dead letters, trying again every " + this.interval + ": "
						+ ex.getMessage());
			}
			else if (logger.isDebugEnabled()) {
				logger.debug("Could not trim delayed-tasks dead letters (round " + this.failedRounds + "): "
						+ ex.getMessage());
			}
		}
		return deleted;
	}

	/**
	 * Trim one queue. A queue whose keys cannot be read (a key of the wrong type) is
	 * logged once and skipped, so it does not keep the other queues from being trimmed;
	 * Redis being out of reach ends the round.
	 * @param queue the queue
	 * @return how many dead letters were deleted
	 */
	private long trim(String queue) {
		try {
			long deleted = this.deadLetters.trim(queue, MAX_CALLS_PER_QUEUE);
			if (this.failingQueues.remove(queue) != null) {
				logger.info("Dead letters of queue '" + queue + "' can be trimmed again");
			}
			return deleted;
		}
		catch (TaskStoreException ex) {
			if (ex.getCause() instanceof DataAccessResourceFailureException
					|| ex.getCause() instanceof TransientDataAccessException) {
				throw ex;
			}
			if (this.failingQueues.put(queue, String.valueOf(ex.getMessage())) == null) {
				logger.warn("Could not trim the dead letters of queue '" + queue + "': " + ex.getMessage());
			}
			return 0;
		}
	}

	@Override
	public synchronized void start() {
		if (this.scheduler == null) {
			this.stopping = false;
			CustomizableThreadFactory threads = new CustomizableThreadFactory("delayed-tasks-dead-letter-retention-");
			threads.setDaemon(true);
			this.scheduler = Executors.newSingleThreadScheduledExecutor(threads);
			// A random first delay, so that instances started together do not all trim at
			// the same moment.
			long period = this.interval.toMillis();
			this.scheduler.scheduleWithFixedDelay(this::trimAll, ThreadLocalRandom.current().nextLong(period + 1),
					period, TimeUnit.MILLISECONDS);
		}
	}

	@Override
	public void stop() {
		ScheduledExecutorService running;
		synchronized (this) {
			running = this.scheduler;
			this.scheduler = null;
		}
		if (running != null) {
			this.stopping = true;
			running.shutdownNow();
			// Let an interrupted round end before the Redis connection stops.
			try {
				running.awaitTermination(2, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.scheduler != null;
	}

}

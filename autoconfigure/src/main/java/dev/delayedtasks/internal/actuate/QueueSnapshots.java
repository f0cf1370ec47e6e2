package dev.delayedtasks.internal.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.QueueStats;
import dev.delayedtasks.internal.store.RedisQueueStats;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Keeps a snapshot of the {@link QueueStats} of the queues that are reported
 * ({@link ReportedQueues}: at most {@code delayed-tasks.monitoring.max-queues}, handled
 * ones first and always), refreshed in the background, so that gauges, health checks and
 * scrapes never call Redis, and a refresh makes a bounded number of Redis calls however
 * many queue names the index holds.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class QueueSnapshots implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(QueueSnapshots.class);

	/**
	 * The default of {@code delayed-tasks.monitoring.max-queues}.
	 */
	public static final int DEFAULT_MAX_QUEUES = 100;

	private final RedisQueueStats stats;

	private final QueueIndex index;

	private final ReportedQueues reported;

	private final Duration interval;

	private final List<Consumer<Map<String, QueueStats>>> listeners = new CopyOnWriteArrayList<>();

	private volatile Map<String, QueueStats> snapshot = Map.of();

	private volatile ReportedQueues.Selection selection = new ReportedQueues.Selection(List.of(), 0, 0);

	private volatile @Nullable Instant refreshedAt;

	private volatile boolean failing;

	private final Map<String, String> unreadable = new ConcurrentHashMap<>();

	private volatile boolean stopping;

	private @Nullable ScheduledExecutorService scheduler;

	/**
	 * Create the snapshots.
	 * @param stats reads one queue's stats
	 * @param index the known queues
	 * @param localQueues the queues this instance has handlers for
	 * @param interval how often to refresh
	 */
	public QueueSnapshots(RedisQueueStats stats, QueueIndex index, Supplier<Set<String>> localQueues,
			Duration interval) {
		this(stats, index, new ReportedQueues(DEFAULT_MAX_QUEUES, Set.of(), localQueues), interval);
	}

	/**
	 * Create the snapshots.
	 * @param stats reads one queue's stats
	 * @param index the known queues
	 * @param reported chooses the queues that are read
	 * @param interval how often to refresh
	 */
	public QueueSnapshots(RedisQueueStats stats, QueueIndex index, ReportedQueues reported, Duration interval) {
		this.stats = stats;
		this.index = index;
		this.reported = reported;
		if (interval.isNegative() || interval.isZero()) {
			throw new IllegalArgumentException(
					"delayed-tasks.snapshot-interval must be positive, but is " + interval + ": use for example 5s");
		}
		this.interval = interval;
	}

	/**
	 * Be told about every new snapshot (for example to register gauges of new queues).
	 * @param listener the listener
	 */
	public void onRefresh(Consumer<Map<String, QueueStats>> listener) {
		this.listeners.add(listener);
		listener.accept(this.snapshot);
	}

	/**
	 * The most queues reported, unless this instance handles more.
	 * @return {@code delayed-tasks.monitoring.max-queues}
	 */
	public int maxQueues() {
		return this.reported.maxQueues();
	}

	/**
	 * Which queues the latest snapshot holds, and how many known queues it leaves out.
	 * @return the selection (empty before the first refresh)
	 */
	public ReportedQueues.Selection selection() {
		return this.selection;
	}

	/**
	 * The latest snapshot, by queue.
	 * @return the snapshot (empty before the first refresh)
	 */
	public Map<String, QueueStats> current() {
		return this.snapshot;
	}

	/**
	 * The queues whose keys could not be read at the latest refresh, with why; their
	 * entries in {@link #current()} are their last known stats.
	 * @return the error message by queue
	 */
	public Map<String, String> unreadable() {
		return Map.copyOf(this.unreadable);
	}

	/**
	 * When the latest snapshot was taken.
	 * @return the time, or {@code null} before the first refresh
	 */
	public @Nullable Instant refreshedAt() {
		return this.refreshedAt;
	}

	/**
	 * Read the reported queues now.
	 */
	public void refresh() {
		try {
			ReportedQueues.Selection chosen = this.reported.select(this.index.queues());
			Map<String, QueueStats> fresh = new LinkedHashMap<>();
			for (String queue : chosen.queues()) {
				QueueStats read = readQueue(queue);
				if (read != null) {
					fresh.put(queue, read);
				}
			}
			// A queue no longer reported (removed, or crowded out) is no longer read.
			this.unreadable.keySet().retainAll(chosen.queues());
			this.snapshot = Collections.unmodifiableMap(fresh);
			this.selection = chosen;
			this.refreshedAt = Instant.now();
			this.failing = false;
			this.listeners.forEach((listener) -> listener.accept(this.snapshot));
		}
		catch (RuntimeException ex) {
			if (this.stopping) {
				// Interrupted by stop(), not a Redis failure.
				return;
			}
			if (!this.failing) {
				logger.warn("Could not refresh the delayed-tasks queue snapshot: " + ex.getMessage());
				this.failing = true;
			}
		}
	}

	/**
	 * One queue's stats, or its last known stats when its keys cannot be read (a key of
	 * the wrong type under the prefix): one broken queue must not blind the others. Redis
	 * being out of reach still fails the whole refresh.
	 * @param queue the queue
	 * @return its stats, its last known stats, or {@code null} when it has none yet
	 */
	private @Nullable QueueStats readQueue(String queue) {
		try {
			QueueStats read = this.stats.read(queue);
			if (this.unreadable.remove(queue) != null) {
				logger.info("Queue '" + queue + "' can be read again");
			}
			return read;
		}
		catch (TaskStoreException ex) {
			if (ex.getCause() instanceof DataAccessResourceFailureException
					|| ex.getCause() instanceof TransientDataAccessException) {
				throw ex;
			}
			if (this.unreadable.put(queue, ex.getMessage()) == null) {
				logger.warn("Could not read queue '" + queue + "' for the snapshot, which keeps its last known stats: "
						+ ex.getMessage());
			}
			return this.snapshot.get(queue);
		}
	}

	@Override
	public synchronized void start() {
		if (this.scheduler == null) {
			this.stopping = false;
			CustomizableThreadFactory threads = new CustomizableThreadFactory("delayed-tasks-snapshot-");
			threads.setDaemon(true);
			this.scheduler = Executors.newSingleThreadScheduledExecutor(threads);
			this.scheduler.scheduleWithFixedDelay(this::refresh, 0, this.interval.toMillis(), TimeUnit.MILLISECONDS);
		}
	}

	@Override
	public synchronized void stop() {
		if (this.scheduler != null) {
			this.stopping = true;
			this.scheduler.shutdownNow();
			// Let an interrupted refresh end before the Redis connection stops.
			try {
				this.scheduler.awaitTermination(2, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			this.scheduler = null;
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.scheduler != null;
	}

}

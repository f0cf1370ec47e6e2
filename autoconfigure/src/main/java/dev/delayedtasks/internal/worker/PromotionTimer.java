package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.TaskHandoff;
import dev.delayedtasks.internal.store.TaskHandoffs;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.TimerTick;
import dev.delayedtasks.internal.worker.BlockingConnections.BlockingConnection;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The timer of one queue partition. The instance that holds the partition's timer lease
 * in Redis arms a local monotonic timer for the next due time or lease expiry the scripts
 * report, and runs {@code promote} at that instant; an enqueue that creates a new
 * earliest due time pushes a {@code tick} the owner blocks on, so it re-arms at once.
 * Other instances try to take the lease over when it would expire, so a dead owner is
 * replaced within its TTL. No fixed-period poll decides when a task runs.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class PromotionTimer {

	private static final Log logger = LogFactory.getLog(PromotionTimer.class);

	private static final long ERROR_RETRY_MILLIS = 250;

	private final String queue;

	private final PartitionKeys keys;

	private final TaskStore store;

	private final String instanceId;

	private final Duration ttl;

	private final Duration grace;

	private final Duration block;

	private final BlockingConnections connections;

	private final @Nullable TaskHandoffs handoffs;

	private final int maxClaim;

	private final Listeners listeners;

	private @Nullable ScheduledExecutorService scheduler;

	private volatile boolean running;

	private volatile boolean owner;

	/**
	 * Local time until which the timer lease this instance last took surely holds: the
	 * lease runs for the TTL from a moment after the tick was sent. Past it, a tick that
	 * cannot reach Redis (a partition) no longer lets this instance say it owns the
	 * timer, which another instance may have taken over.
	 */
	private volatile long ownedUntilNanos;

	private @Nullable ScheduledFuture<?> armed;

	private @Nullable Thread tickReader;

	private @Nullable BlockingConnection tickConnection;

	/**
	 * Open once the first tick since {@link #start()} has said whether this instance owns
	 * the timer: until then the tick reader would block on the wrong list.
	 */
	private volatile CountDownLatch ownershipKnown = new CountDownLatch(1);

	private final ThrottledWarning failures = new ThrottledWarning(logger, Duration.ofMinutes(1));

	/**
	 * Create the timer of a queue. With hand-offs, its owner's ticks also lease ready
	 * tasks for this instance's idle dispatcher.
	 * @param queue the queue
	 * @param keys its keys
	 * @param store the store
	 * @param instanceId this instance's id
	 * @param settings how workers run
	 * @param connections opens the tick reader's blocking connection
	 * @param handoffs where the queue's dispatcher offers room, or {@code null} for none
	 * @param listeners told of the tasks a tick ended because they expired
	 */
	PromotionTimer(String queue, PartitionKeys keys, TaskStore store, String instanceId, WorkerSettings settings,
			BlockingConnections connections, @Nullable TaskHandoffs handoffs, Listeners listeners) {
		this.queue = queue;
		this.keys = keys;
		this.store = store;
		this.instanceId = instanceId;
		this.ttl = settings.timerTtl();
		this.grace = settings.reapGrace();
		this.block = settings.blockTimeout();
		this.connections = connections;
		this.handoffs = handoffs;
		this.maxClaim = settings.maxClaim();
		this.listeners = listeners;
	}

	/**
	 * Start contending for the timer, on a thread of this queue's own: a stalled Redis
	 * node delays only the timers of the queues it holds.
	 * @param threads makes the queue's threads
	 */
	synchronized void start(QueueThreads threads) {
		if (this.running) {
			return;
		}
		this.running = true;
		this.ownershipKnown = new CountDownLatch(1);
		ScheduledExecutorService scheduler = threads.scheduler("timer");
		this.scheduler = scheduler;
		this.armed = scheduler.schedule(this::tick, 0, TimeUnit.MILLISECONDS);
		this.tickReader = threads.start("tick", this::readTicks, true);
	}

	/**
	 * Stop contending and hand the timer over, waiting until {@code deadline} at most.
	 * @param deadline the {@link System#nanoTime()} after which to stop waiting
	 */
	void stop(long deadline) {
		Thread reader;
		synchronized (this) {
			if (!this.running) {
				return;
			}
			this.running = false;
			if (this.armed != null) {
				this.armed.cancel(false);
			}
			reader = this.tickReader;
		}
		if (reader != null) {
			reader.interrupt();
			try {
				reader.join(waitMillis(deadline));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		// On the timer's own thread, so a tick already under way cannot take the timer
		// back after the resignation.
		try {
			timerThread().submit(this::resign).get(waitMillis(deadline), TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			resign();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.debug("Could not resign the timer of queue '" + this.queue + "': " + ex.getMessage());
		}
		timerThread().shutdownNow();
	}

	private long waitMillis(long deadline) {
		long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
		return Math.min(left, this.block.plusSeconds(2).toMillis());
	}

	private void resign() {
		if (this.owner) {
			this.owner = false;
			try {
				this.store.resignTimer(this.queue, this.instanceId);
			}
			catch (RuntimeException ex) {
				logger.debug("Could not resign the timer of queue '" + this.queue + "': " + ex.getMessage());
			}
		}
	}

	private ScheduledExecutorService timerThread() {
		ScheduledExecutorService thread = this.scheduler;
		if (thread == null) {
			throw new RejectedExecutionException("The timer of queue '" + this.queue + "' was never started");
		}
		return thread;
	}

	boolean isOwner() {
		return this.owner && System.nanoTime() - this.ownedUntilNanos < 0;
	}

	boolean isRunning() {
		return this.running;
	}

	/**
	 * Take or keep the timer lease, promote due tasks, reap expired leases, and arm the
	 * next tick.
	 */
	void tick() {
		runTick(false);
	}

	/**
	 * A tick, possibly for a {@code tick} token this instance popped: if it turns out not
	 * to own the timer (its owner flag was stale), the script hands the token back to the
	 * real owner.
	 * @param tickConsumed whether this instance popped a {@code tick} token for it
	 */
	private void runTick(boolean tickConsumed) {
		if (!this.running) {
			return;
		}
		long delayMillis;
		try {
			long started = System.nanoTime();
			TimerTick tick = promote(tickConsumed, started);
			long halfRoundTrip = (System.nanoTime() - started) / 2_000_000;
			this.ownedUntilNanos = started + this.ttl.toNanos();
			this.owner = tick.owner();
			delayMillis = tick.owner() ? ownerDelay(tick, halfRoundTrip) : contenderDelay(tick);
			this.failures.reset();
		}
		catch (RuntimeException | Error ex) {
			// An Error too (out of memory for a moment while reading a reply that carries
			// tasks): a timer that stops re-arming leaves the queue's due tasks
			// unpromoted
			// while health says UP.
			if (!this.running) {
				// Interrupted by stop(), not an outage.
				return;
			}
			if (this.owner && !isOwner()) {
				// The lease ran out while Redis could not be reached: wait for a
				// handover as a contender does, and say so.
				this.owner = false;
			}
			this.failures.warn("Timer of queue '" + this.queue + "' failed, retrying: " + ex.getMessage());
			delayMillis = ERROR_RETRY_MILLIS;
		}
		this.ownershipKnown.countDown();
		arm(delayMillis);
	}

	/**
	 * One {@code promote} call. As the owner, with the queue's dispatcher here idle and
	 * with room, it also leases ready tasks for it, which this thread hands over: a task
	 * that falls due needs no wake-up and no claim.
	 * @param tickConsumed whether this instance popped a {@code tick} token for it
	 * @param started when the call is sent: the leases run from then
	 * @return what the tick found
	 */
	private TimerTick promote(boolean tickConsumed, long started) {
		TaskHandoff.Reservation reservation = (this.handoffs != null && this.owner)
				? this.handoffs.reserve(this.queue, this.maxClaim) : null;
		TimerTick tick;
		try {
			tick = this.store.promote(this.queue, this.instanceId, this.ttl, tickConsumed,
					(reservation != null) ? reservation.lease() : null);
		}
		catch (RuntimeException | Error ex) {
			if (reservation != null) {
				reservation.lost();
			}
			throw ex;
		}
		if (reservation != null) {
			reservation.accept(tick.handedOff(), tick.now(), started);
		}
		this.listeners.expired(this.queue, tick.expired());
		return tick;
	}

	private long ownerDelay(TimerTick tick, long halfRoundTrip) {
		if (tick.more()) {
			return 0;
		}
		long renew = TimerTick.rearmInterval(this.ttl).toMillis();
		long next = Long.MAX_VALUE;
		if (tick.nextDueMs() >= 0) {
			next = tick.nextDueMs();
		}
		if (tick.earliestLeaseMs() >= 0) {
			next = Math.min(next, tick.earliestLeaseMs() + this.grace.toMillis());
		}
		if (next == Long.MAX_VALUE) {
			return renew;
		}
		// Redis time of the reply is about half a round trip old by now; never spin below
		// 1 ms.
		return Math.max(1, Math.min(renew, next - tick.now() - halfRoundTrip));
	}

	private long contenderDelay(TimerTick tick) {
		return Math.max(50, Math.min(tick.ttlMs(), this.ttl.toMillis()));
	}

	private synchronized void arm(long delayMillis) {
		if (!this.running) {
			return;
		}
		if (this.armed != null) {
			this.armed.cancel(false);
		}
		this.armed = timerThread().schedule(this::tick, delayMillis, TimeUnit.MILLISECONDS);
	}

	/**
	 * Block on the partition's tick list while this instance owns the timer (a popped
	 * tick means an enqueue created a new earliest due time), and on its handover list
	 * while it does not (a popped token means the owner resigned: take over at once). The
	 * tick runs on the timer thread and is waited for, so the next pop already knows
	 * whether this instance owns the timer.
	 */
	private void readTicks() {
		try {
			// An owner that blocked on the handover list at start-up would miss the ticks
			// of new earliest due times for a whole block.
			this.ownershipKnown.await();
		}
		catch (InterruptedException ex) {
			return;
		}
		while (this.running) {
			try {
				if (this.tickConnection == null) {
					this.tickConnection = this.connections.open(this.block);
				}
				boolean owner = this.owner;
				if (this.tickConnection.pop(this.block, owner ? this.keys.tick() : this.keys.handover()) != null) {
					timerThread().submit(() -> runTick(owner)).get();
				}
			}
			catch (InterruptedException ex) {
				break;
			}
			catch (ExecutionException | RuntimeException ex) {
				if (!this.running) {
					break;
				}
				logger.debug("Tick reader of queue '" + this.queue + "' failed, retrying: " + ex.getMessage());
				closeTickConnection();
				sleepQuietly(ERROR_RETRY_MILLIS);
			}
		}
		closeTickConnection();
	}

	private void closeTickConnection() {
		BlockingConnection connection = this.tickConnection;
		this.tickConnection = null;
		if (connection != null) {
			connection.close();
		}
	}

	private static void sleepQuietly(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}

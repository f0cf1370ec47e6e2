package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.internal.store.Lease;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.TaskStore.ExtendOutcome;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.TaskScheduler;

/**
 * Extends the leases of a queue's started tasks in one batch every third of the lease. A
 * lease that Redis reports lost, or that could not be extended before it ran out, stops
 * being this worker's: its handler is interrupted and its outcome will not be recorded,
 * or, when the handler has not started yet, it never starts. A cancel request interrupts
 * the handler too.
 * <p>
 * A claimed task whose handler has not started keeps only the lease of its claim: one the
 * handler executor dropped (a discard policy) or still holds back when its start window
 * ends is released to the queue at once, without penalty, and never starts here.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class LeaseHeartbeat {

	private static final Log logger = LogFactory.getLog(LeaseHeartbeat.class);

	private final String queue;

	private final TaskStore store;

	private final long leaseNanos;

	private final long beatMillis;

	private final long checkMillis;

	/**
	 * How long after its claim a handler may start: its first heartbeat must come before
	 * the claim's lease runs out locally.
	 */
	private final long startWindowNanos;

	private @Nullable ScheduledExecutorService thread;

	private @Nullable ScheduledFuture<?> localCheck;

	private final Map<String, ActiveRun> runs = new ConcurrentHashMap<>();

	private final AtomicInteger expectedHandoffs = new AtomicInteger();

	LeaseHeartbeat(String queue, TaskStore store, WorkerSettings settings) {
		this.queue = queue;
		this.store = store;
		// Keep a safety margin below the real lease: the local clock starts after
		// Redis's.
		this.leaseNanos = settings.leaseDuration().toNanos() * 9 / 10;
		this.beatMillis = settings.heartbeatInterval().toMillis();
		this.checkMillis = Math.max(10, settings.leaseDuration().toMillis() / 10);
		this.startWindowNanos = Math.max(this.leaseNanos / 4, this.leaseNanos
				- TimeUnit.MILLISECONDS.toNanos(this.beatMillis) - TimeUnit.MILLISECONDS.toNanos(this.checkMillis));
	}

	/**
	 * How long after its claim a handler may start, at most.
	 * @return the start window
	 */
	Duration startWindow() {
		return Duration.ofNanos(this.startWindowNanos);
	}

	/**
	 * Start beating on a thread of this queue's own, apart from its timer, so a heartbeat
	 * never waits behind a promote call or another queue's Redis node.
	 * @param threads makes the queue's threads
	 * @param scheduler the shared scheduler that never waits on Redis: the local lease
	 * check runs there, so a heartbeat stuck on a stalled node cannot keep a handler
	 * running past its lease
	 */
	synchronized void start(QueueThreads threads, TaskScheduler scheduler) {
		ScheduledExecutorService beats = threads.scheduler("heartbeat");
		beats.scheduleAtFixedRate(this::beat, this.beatMillis, this.beatMillis, TimeUnit.MILLISECONDS);
		this.thread = beats;
		Duration check = Duration.ofMillis(this.checkMillis);
		this.localCheck = scheduler.scheduleAtFixedRate(this::checkLocalLeases, Instant.now().plus(check), check);
	}

	/**
	 * Stop beating and forget every run still tracked: the leases still held run out on
	 * their own, and nothing of this start is carried into the next.
	 */
	synchronized void stop() {
		if (this.localCheck != null) {
			this.localCheck.cancel(false);
		}
		if (this.thread != null) {
			this.thread.shutdownNow();
			this.thread = null;
		}
		active().forEach(this::untrack);
	}

	/**
	 * Hold a claimed task until {@link #untrack(ActiveRun)}.
	 * @param lease its lease
	 * @param context what its handler sees
	 * @param claimedAt when the claim was sent, as {@link System#nanoTime()}: the lease
	 * runs from then
	 * @param onEnd called once when it is untracked
	 * @return the run
	 */
	ActiveRun track(Lease lease, TaskContext context, long claimedAt, Runnable onEnd) {
		ActiveRun run = new ActiveRun(lease, context, claimedAt + this.leaseNanos, claimedAt + this.startWindowNanos,
				onEnd);
		this.runs.put(lease.id().value(), run);
		return run;
	}

	/**
	 * Stop holding a task: its outcome is recorded, it was released, or its lease is no
	 * longer this instance's. Ends the run (frees its permit) once.
	 * @param run the run
	 */
	void untrack(ActiveRun run) {
		this.runs.remove(run.lease().id().value(), run);
		run.end();
	}

	/**
	 * Interrupt the handlers whose lease ran out locally. Never talks to Redis, so it
	 * works while a heartbeat call hangs on a stalled node.
	 */
	void checkLocalLeases() {
		long now = System.nanoTime();
		for (ActiveRun run : this.runs.values()) {
			if (run.isUndecided() && run.leaseExpiredAt(now)) {
				leaseLost(run);
			}
		}
	}

	/**
	 * The lease is no longer this instance's: a handler that has not started never starts
	 * (another instance may be running the task already), a running one is interrupted.
	 * @param run the run whose lease was lost
	 * @return whether the run was given up before its handler started
	 */
	private boolean leaseLost(ActiveRun run) {
		if (run.abandon()) {
			untrack(run);
			return true;
		}
		run.stop(ActiveRun.LEASE_LOST);
		return false;
	}

	/**
	 * Release the runs whose handlers did not start within their start window (the
	 * executor dropped them, or ran them too late): without penalty, back to the head of
	 * the queue, so another dispatcher runs them at once. A round trip only when there
	 * are any.
	 * @param tracked the runs held now
	 * @param now the time of this beat
	 */
	private void releaseUnstarted(List<ActiveRun> tracked, long now) {
		List<ActiveRun> overdue = tracked.stream().filter((run) -> run.startOverdueAt(now) && run.abandon()).toList();
		if (overdue.isEmpty()) {
			return;
		}
		List<String> ids = overdue.stream().map((run) -> run.lease().id().value()).toList();
		try {
			this.store.release(this.queue, overdue.stream().map(ActiveRun::lease).toList());
			logger.warn(overdue.size() + " claimed task(s) of queue '" + this.queue + "' did not start within "
					+ startWindow() + " (the handler executor dropped them or is saturated); released them: " + ids);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release " + overdue.size() + " unstarted task(s) of queue '" + this.queue
					+ "'; they run again after their lease expires: " + ids + ": " + ex.getMessage());
		}
		overdue.forEach(this::untrack);
	}

	/**
	 * Count tasks that an {@code enqueue} call in flight may hand to this queue's
	 * dispatcher (the room it reserved), until {@link #handoffsSettled(int)}.
	 * @param room the room reserved
	 */
	void handoffsExpected(int room) {
		this.expectedHandoffs.addAndGet(room);
	}

	/**
	 * The call of a reservation returned, and its tasks, if any, are tracked.
	 * @param room the room it had reserved
	 */
	void handoffsSettled(int room) {
		this.expectedHandoffs.addAndGet(-room);
	}

	/**
	 * How many runs this instance holds or may be handed now: runs whose handler has not
	 * returned, those whose outcome waits to be recorded, and the room of {@code enqueue}
	 * calls in flight.
	 * @return the count
	 */
	int heldOrExpected() {
		return this.runs.size() + this.expectedHandoffs.get();
	}

	/**
	 * The runs held now, in the order they were leased: a graceful stop gives back the
	 * unstarted ones in that order, to the head of the queue.
	 * @return the runs
	 */
	List<ActiveRun> active() {
		List<ActiveRun> active = new ArrayList<>(this.runs.values());
		active.sort(Comparator.comparingLong((run) -> run.lease().fence()));
		return active;
	}

	void beat() {
		List<ActiveRun> tracked = active();
		if (tracked.isEmpty()) {
			return;
		}
		long sent = System.nanoTime();
		// A lease that ran out locally (extensions failed or were late) is no longer
		// ours, whatever Redis says.
		checkLocalLeases();
		releaseUnstarted(tracked, sent);
		// Only started runs are extended: a run the executor never starts must not be
		// held for the life of the instance.
		List<ActiveRun> current = tracked.stream().filter(ActiveRun::hasStarted).toList();
		if (current.isEmpty()) {
			return;
		}
		try {
			List<ExtendOutcome> outcomes = this.store.extend(this.queue,
					current.stream().map(ActiveRun::lease).toList());
			for (int i = 0; i < current.size(); i++) {
				ActiveRun run = current.get(i);
				switch (outcomes.get(i)) {
					case EXTENDED -> run.extendedUntil(sent + this.leaseNanos);
					case CANCEL_REQUESTED -> {
						run.extendedUntil(sent + this.leaseNanos);
						run.stop("cancelled");
					}
					case LOST -> {
						if (!run.isUndecided()) {
							// Completed while the extension was on its way: the task is
							// gone because it was acknowledged, not because it was taken.
							continue;
						}
						boolean abandoned = leaseLost(run);
						logger.warn("Task " + run.lease().id() + " of queue '" + this.queue
								+ "' lost its lease (another worker may run it now); "
								+ (abandoned ? "its handler will not start" : "interrupting its handler"));
					}
				}
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not extend the leases of queue '" + this.queue + "': " + ex.getMessage());
			checkLocalLeases();
		}
	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.internal.store.Lease;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.TaskStore.ExtendOutcome;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.TaskScheduler;

/**
 * Extends the leases of a queue's running tasks in one batch every third of the lease. A
 * lease that Redis reports lost, or that could not be extended before it ran out, stops
 * being this worker's: its handler is interrupted and its outcome will not be recorded,
 * or, when the handler has not started yet, it never starts. A cancel request interrupts
 * the handler too.
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

	private @Nullable ScheduledExecutorService thread;

	private @Nullable ScheduledFuture<?> localCheck;

	private final Map<String, ActiveRun> runs = new ConcurrentHashMap<>();

	LeaseHeartbeat(String queue, TaskStore store, WorkerSettings settings) {
		this.queue = queue;
		this.store = store;
		// Keep a safety margin below the real lease: the local clock starts after
		// Redis's.
		this.leaseNanos = settings.leaseDuration().toNanos() * 9 / 10;
		this.beatMillis = settings.heartbeatInterval().toMillis();
		this.checkMillis = Math.max(10, settings.leaseDuration().toMillis() / 10);
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
	 * Stop beating: the leases still held run out on their own.
	 */
	synchronized void stop() {
		if (this.localCheck != null) {
			this.localCheck.cancel(false);
		}
		if (this.thread != null) {
			this.thread.shutdownNow();
			this.thread = null;
		}
	}

	/**
	 * Hold a claimed task until {@link #untrack(ActiveRun)}.
	 * @param lease its lease
	 * @param context what its handler sees
	 * @param onEnd called once when it is untracked
	 * @return the run
	 */
	ActiveRun track(Lease lease, TaskContext context, Runnable onEnd) {
		ActiveRun run = new ActiveRun(lease, context, System.nanoTime() + this.leaseNanos, onEnd);
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
		run.stop("lease-lost");
		return false;
	}

	List<ActiveRun> active() {
		return new ArrayList<>(this.runs.values());
	}

	void beat() {
		List<ActiveRun> current = active();
		if (current.isEmpty()) {
			return;
		}
		long sent = System.nanoTime();
		// A lease that ran out locally (extensions failed or were late) is no longer
		// ours, whatever Redis says.
		checkLocalLeases();
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

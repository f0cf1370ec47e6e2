package dev.delayedtasks.internal.worker;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.internal.store.Lease;
import org.jspecify.annotations.Nullable;

/**
 * A task this instance holds: from its claim until its outcome is recorded in Redis or it
 * is released. Its fate moves once along {@code QUEUED -> STARTED -> FINISHED}, or ends
 * {@code RELEASED} when shutdown takes it back before the handler started or after the
 * handler gave up because shutdown interrupted it, or {@code ABANDONED} when its lease
 * was lost, or its start window ended, before the handler started. A handler that is
 * still running can never be released, so no other instance runs the task while it runs
 * here.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class ActiveRun {

	/** The stop reason of a graceful shutdown. */
	static final String SHUTDOWN = "shutdown";

	/** The stop reason of a run whose lease ran out before it ended. */
	static final String LEASE_LOST = "lease-lost";

	private final Lease lease;

	private final TaskContext context;

	private final Runnable onEnd;

	private final AtomicReference<Fate> fate = new AtomicReference<>(Fate.QUEUED);

	private final AtomicBoolean ended = new AtomicBoolean();

	private @Nullable Thread thread;

	private volatile long leaseValidUntilNanos;

	private final long startByNanos;

	private volatile @Nullable String stopReason;

	private boolean timedOut;

	/**
	 * Create a run.
	 * @param lease the lease
	 * @param context what the handler sees
	 * @param leaseValidUntilNanos local time until which the lease surely holds
	 * @param startByNanos local time after which the handler must no longer start: its
	 * lease is extended only once it runs, so a later start could overlap with another
	 * instance's run after the lease ran out
	 * @param onEnd called once when this instance stops holding the task (frees its hold)
	 */
	ActiveRun(Lease lease, TaskContext context, long leaseValidUntilNanos, long startByNanos, Runnable onEnd) {
		this.lease = lease;
		this.context = context;
		this.leaseValidUntilNanos = leaseValidUntilNanos;
		this.startByNanos = startByNanos;
		this.onEnd = onEnd;
	}

	Lease lease() {
		return this.lease;
	}

	TaskContext context() {
		return this.context;
	}

	/**
	 * Bind the handler's thread and mark the run started, unless shutdown asked it to
	 * stop before it started or released it, or its time to start has passed (the
	 * executor ran it late; the heartbeat releases it).
	 * @param thread the worker thread about to call the handler
	 * @return {@code false} when the handler must not be called
	 */
	synchronized boolean start(Thread thread) {
		if (SHUTDOWN.equals(this.stopReason) || startOverdueAt(System.nanoTime())
				|| !this.fate.compareAndSet(Fate.QUEUED, Fate.STARTED)) {
			return false;
		}
		this.thread = thread;
		return true;
	}

	/**
	 * Detach the handler's thread: from now on no stop request interrupts it (it may run
	 * the next task).
	 */
	synchronized void unbind() {
		this.thread = null;
	}

	void extendedUntil(long nanos) {
		this.leaseValidUntilNanos = nanos;
	}

	/**
	 * Whether the handler has not started and may no longer start.
	 * @param nanos now, as {@link System#nanoTime()}
	 * @return whether the run waits past its start deadline
	 */
	boolean startOverdueAt(long nanos) {
		return this.fate.get() == Fate.QUEUED && nanos - this.startByNanos > 0;
	}

	/**
	 * Whether the handler started and this instance still holds the task for it (running,
	 * or returned with its outcome not yet recorded or released): the leases the
	 * heartbeat extends.
	 * @return whether the run started and is still held
	 */
	boolean hasStarted() {
		Fate current = this.fate.get();
		return current == Fate.STARTED || current == Fate.FINISHED || current == Fate.RETURNED;
	}

	boolean leaseExpiredAt(long nanos) {
		return nanos - this.leaseValidUntilNanos > 0;
	}

	/**
	 * Ask the handler to stop: interrupt its thread if it is still running the handler,
	 * and remember why.
	 * @param reason for example {@code lease-lost}, {@code cancelled} or
	 * {@link #SHUTDOWN}
	 */
	synchronized void stop(String reason) {
		if (this.stopReason == null) {
			this.stopReason = reason;
		}
		if (this.thread != null) {
			this.thread.interrupt();
		}
	}

	/**
	 * The handler's timeout passed: interrupt it, if it still runs.
	 */
	synchronized void timeOut() {
		if (this.thread != null) {
			this.timedOut = true;
			stop("timeout");
		}
	}

	synchronized boolean timedOut() {
		return this.timedOut;
	}

	/**
	 * The handler returned: claim the right to record its outcome.
	 * @return {@code false} if the run is no longer this instance's to record
	 */
	boolean finish() {
		return this.fate.compareAndSet(Fate.STARTED, Fate.FINISHED);
	}

	/**
	 * The handler gave up because shutdown interrupted it: its task goes back without an
	 * outcome.
	 */
	void returnForRelease() {
		this.fate.compareAndSet(Fate.STARTED, Fate.RETURNED);
	}

	/**
	 * Give the task up because its lease is lost before the handler started: the handler
	 * must then never start, since another instance may run the task already.
	 * @return {@code false} if the handler started (or the run ended otherwise)
	 */
	boolean abandon() {
		return this.fate.compareAndSet(Fate.QUEUED, Fate.ABANDONED);
	}

	/**
	 * Take the task back for release at shutdown: only a run whose handler never started
	 * or returned without an outcome.
	 * @return {@code false} if its handler runs or its outcome is being recorded
	 */
	boolean release() {
		return this.fate.compareAndSet(Fate.QUEUED, Fate.RELEASED)
				|| this.fate.compareAndSet(Fate.RETURNED, Fate.RELEASED);
	}

	/**
	 * Whether the handler is running now (started and not returned).
	 * @return whether it runs
	 */
	boolean isHandlerRunning() {
		return this.fate.get() == Fate.STARTED;
	}

	/**
	 * Whether the run still waits for an outcome: not finished, not released.
	 * @return whether it is undecided
	 */
	boolean isUndecided() {
		Fate current = this.fate.get();
		return current == Fate.QUEUED || current == Fate.STARTED || current == Fate.RETURNED;
	}

	@Nullable String stopReason() {
		return this.stopReason;
	}

	/**
	 * This instance no longer holds the task (outcome recorded, released, or lost): run
	 * the end action once.
	 */
	void end() {
		if (this.ended.compareAndSet(false, true)) {
			this.onEnd.run();
		}
	}

	private enum Fate {

		QUEUED, STARTED, FINISHED, RETURNED, RELEASED, ABANDONED

	}

}

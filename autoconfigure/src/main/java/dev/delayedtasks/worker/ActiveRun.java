package dev.delayedtasks.worker;

import java.util.concurrent.atomic.AtomicReference;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.store.Lease;
import org.jspecify.annotations.Nullable;

/**
 * A task a handler is running on this instance: its lease, its thread, and its fate. The
 * fate is decided once, atomically: either the run finishes (its outcome is recorded) or
 * it is released at shutdown (its outcome is discarded), never both.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class ActiveRun {

	private final Lease lease;

	private final TaskContext context;

	private final AtomicReference<Fate> fate = new AtomicReference<>(Fate.RUNNING);

	private @Nullable Thread thread;

	private volatile long leaseValidUntilNanos;

	private volatile @Nullable String stopReason;

	private boolean timedOut;

	ActiveRun(Lease lease, TaskContext context, long leaseValidUntilNanos) {
		this.lease = lease;
		this.context = context;
		this.leaseValidUntilNanos = leaseValidUntilNanos;
	}

	Lease lease() {
		return this.lease;
	}

	TaskContext context() {
		return this.context;
	}

	synchronized void bind(Thread thread) {
		this.thread = thread;
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

	boolean leaseExpiredAt(long nanos) {
		return nanos - this.leaseValidUntilNanos > 0;
	}

	/**
	 * Ask the handler to stop: interrupt its thread if it is still running the handler,
	 * and remember why.
	 * @param reason for example {@code lease-lost}, {@code cancelled} or {@code released}
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
	 * Claim the right to record this run's outcome.
	 * @return {@code false} if the run was released first
	 */
	boolean finish() {
		return this.fate.compareAndSet(Fate.RUNNING, Fate.FINISHED);
	}

	/**
	 * Take the task back for release at shutdown.
	 * @return {@code false} if the run finished first (its outcome will be recorded)
	 */
	boolean release() {
		return this.fate.compareAndSet(Fate.RUNNING, Fate.RELEASED);
	}

	boolean isRunning() {
		return this.fate.get() == Fate.RUNNING;
	}

	@Nullable String stopReason() {
		return this.stopReason;
	}

	private enum Fate {

		RUNNING, FINISHED, RELEASED

	}

}

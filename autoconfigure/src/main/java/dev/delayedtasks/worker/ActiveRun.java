package dev.delayedtasks.worker;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.store.Lease;
import org.jspecify.annotations.Nullable;

/**
 * A task a handler is running on this instance: its lease, its thread, and why it may
 * have to stop.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class ActiveRun {

	private final Lease lease;

	private final TaskContext context;

	private volatile @Nullable Thread thread;

	private volatile long leaseValidUntilNanos;

	private volatile @Nullable String stopReason;

	private volatile boolean finished;

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

	void bind(Thread thread) {
		this.thread = thread;
	}

	void unbind() {
		this.thread = null;
	}

	void extendedUntil(long nanos) {
		this.leaseValidUntilNanos = nanos;
	}

	boolean leaseExpiredAt(long nanos) {
		return nanos - this.leaseValidUntilNanos > 0;
	}

	/**
	 * Ask the handler to stop: interrupt its thread and remember why.
	 * @param reason for example {@code timeout} or {@code lease-lost}
	 */
	void stop(String reason) {
		if (this.stopReason == null) {
			this.stopReason = reason;
		}
		Thread running = this.thread;
		if (running != null) {
			running.interrupt();
		}
	}

	void markFinished() {
		this.finished = true;
	}

	boolean isFinished() {
		return this.finished;
	}

	boolean released() {
		return "released".equals(this.stopReason);
	}

	@Nullable String stopReason() {
		return this.stopReason;
	}

	boolean leaseLost() {
		return "lease-lost".equals(this.stopReason);
	}

}

package dev.delayedtasks.internal.producer;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.internal.store.PreparedTask;

/**
 * A task in an {@link EnqueueLane}: when it was submitted, and the future its caller
 * holds.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class PendingTask {

	final PreparedTask task;

	final long submitted;

	private final long submittedAtMillis = System.currentTimeMillis();

	final CompletableFuture<ScheduleResult> future = new CompletableFuture<>();

	/** Sent, or to be sent, after a call failed because Redis was unreachable. */
	boolean held;

	/**
	 * A call that carried it failed: the client may have sent it (and may send it again
	 * on reconnecting), so Redis may have stored it.
	 */
	boolean maybeStored;

	PendingTask(PreparedTask task, long submitted) {
		this.task = task;
		this.submitted = submitted;
	}

	/**
	 * The task as it is sent now, due when its caller asked. A delay is shortened by the
	 * time the task waited in the lane. A held task goes with the instant its delay ends
	 * by this machine's clock instead: a call that timed out while Redis was stopped
	 * still runs when it resumes, so a delay sent seconds ago would count from then.
	 * @param now the time, in {@link System#nanoTime()}
	 * @return the task
	 */
	PreparedTask delayLeft(long now) {
		if (this.task.absolute() || this.task.time() == 0) {
			return this.task;
		}
		if (this.held) {
			return this.task.withDue(true, this.submittedAtMillis + this.task.time());
		}
		long waitedMillis = TimeUnit.NANOSECONDS.toMillis(now - this.submitted);
		return (waitedMillis == 0) ? this.task : this.task.withDue(false, Math.max(0, this.task.time() - waitedMillis));
	}

}

package dev.delayedtasks.internal.producer;

import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.internal.store.PreparedTask;

/**
 * A task in an {@link EnqueueLane}: when it was submitted, and the future its caller
 * holds. Its flags are read and written holding the lane's lock.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class PendingTask {

	final PreparedTask task;

	final long submitted;

	final CompletableFuture<ScheduleResult> future = new CompletableFuture<>();

	/** Sent, or to be sent, after a call failed because Redis was unreachable. */
	boolean held;

	/**
	 * A call that carried it failed: the client may have sent it (and may send it again
	 * on reconnecting), so Redis may have stored it.
	 */
	boolean maybeStored;

	/**
	 * Cancelled while this process still held it: never sent again, and cancelled in
	 * Redis once the calls ahead of that cancel have run.
	 */
	boolean withdrawn;

	PendingTask(PreparedTask task, long submitted) {
		this.task = task;
		this.submitted = submitted;
	}

	/**
	 * The task as it is sent now, due when its caller asked. A delay is shortened by the
	 * time the task waited in the lane. A held task goes with the instant its delay ends
	 * by Redis's time instead: a call sent while Redis was stopped still runs when it
	 * resumes, so a delay sent seconds ago would count from then.
	 * @param now the time, in {@link System#nanoTime()}
	 * @param clock the time of Redis as last read
	 * @return the task
	 */
	PreparedTask delayLeft(long now, RedisClock clock) {
		if (this.task.absolute() || this.task.time() == 0) {
			return this.task;
		}
		if (this.held) {
			return this.task.withDue(true, clock.millisAt(this.submitted) + this.task.time());
		}
		long waitedMillis = TimeUnit.NANOSECONDS.toMillis(now - this.submitted);
		return (waitedMillis == 0) ? this.task : this.task.withDue(false, Math.max(0, this.task.time() - waitedMillis));
	}

	/**
	 * The task as {@code find} shows it while it is held: due when its caller asked, by
	 * Redis's time as last read.
	 * @param clock the time of Redis as last read
	 * @return the task's view
	 */
	TaskInfo info(RedisClock clock) {
		Instant created = Instant.ofEpochMilli(clock.millisAt(this.submitted));
		Instant due = this.task.absolute() ? Instant.ofEpochMilli(this.task.time())
				: created.plusMillis(this.task.time());
		TaskRequest request = this.task.request();
		Instant expiresAt = (request.expiresAt() != null) ? request.expiresAt()
				: (request.expireAfter() != null) ? created.plus(request.expireAfter()) : null;
		return new TaskInfo(this.task.id(), this.task.queue(), TaskState.HELD, 0, 0, this.task.maxAttempts(), due,
				created, false, null, expiresAt,
				(request.priority() != null) ? request.priority() : TaskRequest.DEFAULT_PRIORITY);
	}

}

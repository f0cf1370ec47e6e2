package dev.delayedtasks;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * What {@link DelayedTaskScheduler#submit(TaskRequest)} did with a request.
 * <p>
 * A request sent {@link TaskRequest#afterCommit() after the commit} of the caller's
 * transaction is {@link Outcome#PENDING PENDING} when the call returns: nothing has been
 * written yet, so only what the caller's side knows is reported. Its id is the one the
 * task gets if the send creates it (the request's own id, or one generated at the call);
 * a unique key or an existing id may still turn it into a duplicate or existing task when
 * it is sent, which {@link DelayedTaskListener#scheduled(String, ScheduleResult)} then
 * reports. Its due time is unknown ({@code null}): a delay is counted from Redis's clock
 * when the task is stored.
 *
 * @param id the id of the task that now stands for the request: the new one, or the one
 * that already existed; for a pending request, the id the task will have if it is created
 * @param outcome whether a task was created, or that the request waits for a commit
 * @param dueAt when that task is due (Redis time); {@code null} only when
 * {@link Outcome#PENDING PENDING}
 * @author delayed-tasks
 * @since 0.1.0
 */
public record ScheduleResult(TaskId id, Outcome outcome, @Nullable Instant dueAt) {

	/**
	 * A request that waits for the commit of the caller's transaction.
	 * @param id the id the task will have if it is created
	 * @return the result
	 */
	public static ScheduleResult pending(TaskId id) {
		return new ScheduleResult(id, Outcome.PENDING, null);
	}

	/**
	 * Whether a new task was created.
	 * @return {@code true} for {@link Outcome#CREATED}
	 */
	public boolean created() {
		return this.outcome == Outcome.CREATED;
	}

	/**
	 * Whether the request waits for the commit of the caller's transaction and nothing
	 * has been written yet.
	 * @return {@code true} for {@link Outcome#PENDING}
	 */
	public boolean pending() {
		return this.outcome == Outcome.PENDING;
	}

	/**
	 * What happened to a request.
	 */
	public enum Outcome {

		/** A new task was stored. */
		CREATED,

		/** A task with the requested id exists already; it was left as it is. */
		EXISTING,

		/** Another task holds the request's unique key; its id is returned. */
		DUPLICATE,

		/**
		 * Nothing was written yet: the request is sent when the caller's transaction
		 * commits, and dropped if it rolls back ({@link TaskRequest#afterCommit()}).
		 */
		PENDING

	}

}

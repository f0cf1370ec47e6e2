package dev.delayedtasks;

import java.time.Instant;

/**
 * What {@link DelayedTaskScheduler#submit(TaskRequest)} did with a request.
 *
 * @param id the id of the task that now stands for the request: the new one, or the one
 * that already existed
 * @param outcome whether a task was created
 * @param dueAt when that task is due (Redis time)
 * @author delayed-tasks
 * @since 0.1.0
 */
public record ScheduleResult(TaskId id, Outcome outcome, Instant dueAt) {

	/**
	 * Whether a new task was created.
	 * @return {@code true} for {@link Outcome#CREATED}
	 */
	public boolean created() {
		return this.outcome == Outcome.CREATED;
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
		DUPLICATE

	}

}

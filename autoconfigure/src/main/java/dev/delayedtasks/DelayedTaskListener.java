package dev.delayedtasks;

import java.time.Duration;
import java.time.Instant;

/**
 * Callbacks on the life of tasks, for alerting and metrics. Every method has an empty
 * default; implement the ones you need and declare the listener as a bean. Listeners run
 * on the library's threads: keep them fast and never let them throw (exceptions are
 * logged and ignored).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface DelayedTaskListener {

	/**
	 * A task was stored.
	 * @param queue the queue
	 * @param result what the scheduler did
	 */
	default void scheduled(String queue, ScheduleResult result) {
	}

	/**
	 * A scheduled or ready task was cancelled.
	 * @param queue the queue
	 * @param id the task
	 */
	default void cancelled(String queue, TaskId id) {
	}

	/**
	 * A handler is about to run a task.
	 * @param context the run
	 */
	default void started(TaskContext context) {
	}

	/**
	 * A handler returned normally.
	 * @param context the run
	 * @param runTime how long the handler ran
	 */
	default void succeeded(TaskContext context, Duration runTime) {
	}

	/**
	 * A handler failed and the task will run again.
	 * @param context the run
	 * @param failure what the handler threw
	 * @param nextRunAt when it runs again, Redis time
	 */
	default void retried(TaskContext context, Throwable failure, Instant nextRunAt) {
	}

	/**
	 * A task failed for good and was moved to the dead letters.
	 * @param context the run
	 * @param failure what the handler threw
	 * @param reason why it was dead-lettered: the {@link FailureReason#value() value} of
	 * a {@link FailureReason}, for example {@code retries-exhausted}
	 */
	default void deadLettered(TaskContext context, Throwable failure, String reason) {
	}

	/**
	 * A worker's completion was rejected because another worker owns the task now: the
	 * task ran twice.
	 * @param context the run
	 */
	default void staleAcknowledgement(TaskContext context) {
	}

}

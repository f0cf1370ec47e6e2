package dev.delayedtasks;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A snapshot of one task, as {@link DelayedTaskScheduler#find(String, TaskId)} read it.
 *
 * @param id the id
 * @param queue the queue
 * @param state the state
 * @param failures how many runs failed so far
 * @param deliveries how many times a worker claimed it
 * @param maxAttempts how many runs it may have in all
 * @param dueAt when it is (or was) due, Redis time
 * @param createdAt when it was stored, Redis time
 * @param cancelRequested whether a cancel was requested while it runs
 * @param lastError the last failure, or {@code null}
 * @param expiresAt from when it is never run, Redis time, or {@code null} for no expiry
 * @param priority its place among the queue's due tasks
 * ({@link TaskRequest#priority(int)})
 * @author delayed-tasks
 * @since 0.1.0
 */
public record TaskInfo(TaskId id, String queue, TaskState state, int failures, int deliveries, int maxAttempts,
		Instant dueAt, Instant createdAt, boolean cancelRequested, @Nullable TaskError lastError,
		@Nullable Instant expiresAt, int priority) {

	/**
	 * A snapshot of a task of the default priority.
	 * @param id the id
	 * @param queue the queue
	 * @param state the state
	 * @param failures how many runs failed so far
	 * @param deliveries how many times a worker claimed it
	 * @param maxAttempts how many runs it may have in all
	 * @param dueAt when it is (or was) due, Redis time
	 * @param createdAt when it was stored, Redis time
	 * @param cancelRequested whether a cancel was requested while it runs
	 * @param lastError the last failure, or {@code null}
	 * @param expiresAt from when it is never run, Redis time, or {@code null}
	 */
	public TaskInfo(TaskId id, String queue, TaskState state, int failures, int deliveries, int maxAttempts,
			Instant dueAt, Instant createdAt, boolean cancelRequested, @Nullable TaskError lastError,
			@Nullable Instant expiresAt) {
		this(id, queue, state, failures, deliveries, maxAttempts, dueAt, createdAt, cancelRequested, lastError,
				expiresAt, TaskRequest.DEFAULT_PRIORITY);
	}

	/**
	 * A recorded failure.
	 *
	 * @param reason why the task failed or was dead-lettered: the
	 * {@link FailureReason#value() value} of a {@link FailureReason}, {@code failed} for
	 * a task that will run again
	 * @param exceptionType the exception's class name, or {@code ""}
	 * @param message the exception's message (truncated), or {@code ""}
	 */
	public record TaskError(String reason, String exceptionType, String message) {

	}

}

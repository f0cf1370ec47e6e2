package dev.delayedtasks;

import java.time.Instant;

/**
 * A task that failed for good. Never carries the payload.
 *
 * @param id the task's id
 * @param queue the queue
 * @param reason why it was dead-lettered: the {@link FailureReason#value() value} of a
 * {@link FailureReason}, such as {@code retries-exhausted}, or one written by a newer
 * version ({@link FailureReason#fromValue(String)} is then empty)
 * @param exceptionType the class name of the last exception, or {@code ""}
 * @param message the last exception's message (truncated to 500 characters), or
 * {@code ""}
 * @param attempts how many runs failed
 * @param deadAt when it was dead-lettered, Redis time
 * @param stackTrace the last exception's stack trace as Java prints it, with its causes
 * ({@code Caused by:}) and suppressed exceptions, but bounded: at most 20 frames per
 * exception and 4,096 characters in all, exception types and frames only (no messages);
 * {@code ""} when there is none (a dead letter without an exception, or one stored before
 * stack traces were kept)
 * @author delayed-tasks
 * @since 0.1.0
 */
public record DeadLetter(TaskId id, String queue, String reason, String exceptionType, String message, int attempts,
		Instant deadAt, String stackTrace) {

	/**
	 * Create a dead letter without a stack trace.
	 * @param id the task's id
	 * @param queue the queue
	 * @param reason why it was dead-lettered
	 * @param exceptionType the class name of the last exception, or {@code ""}
	 * @param message the last exception's message, or {@code ""}
	 * @param attempts how many runs failed
	 * @param deadAt when it was dead-lettered, Redis time
	 */
	public DeadLetter(TaskId id, String queue, String reason, String exceptionType, String message, int attempts,
			Instant deadAt) {
		this(id, queue, reason, exceptionType, message, attempts, deadAt, "");
	}

}

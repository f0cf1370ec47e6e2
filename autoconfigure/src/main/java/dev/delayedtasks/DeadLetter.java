package dev.delayedtasks;

import java.time.Instant;

/**
 * A task that failed for good. Never carries the payload.
 *
 * @param id the task's id
 * @param queue the queue
 * @param reason why it was dead-lettered: {@code retries-exhausted},
 * {@code non-retryable}, {@code max-deliveries}, {@code corrupt}, or a reason the worker
 * gave
 * @param exceptionType the class name of the last exception, or {@code ""}
 * @param message the last exception's message (truncated to 500 characters), or
 * {@code ""}
 * @param attempts how many runs failed
 * @param deadAt when it was dead-lettered, Redis time
 * @author delayed-tasks
 * @since 0.1.0
 */
public record DeadLetter(TaskId id, String queue, String reason, String exceptionType, String message, int attempts,
		Instant deadAt) {

}

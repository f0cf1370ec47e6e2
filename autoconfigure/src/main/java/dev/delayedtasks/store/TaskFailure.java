package dev.delayedtasks.store;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * How a run failed, and what the retry policy decided.
 *
 * @param retryDelay the back-off before the next run, or {@code null} to dead-letter now
 * @param deadReason the dead-letter reason when {@code retryDelay} is {@code null}, for
 * example {@code non-retryable}
 * @param exceptionType the exception's class name
 * @param message the exception's message, truncated to 500 characters
 * @author delayed-tasks
 * @since 0.1.0
 */
public record TaskFailure(@Nullable Duration retryDelay, String deadReason, String exceptionType, String message) {

	/** The longest message kept. */
	public static final int MAX_MESSAGE_LENGTH = 500;

	/**
	 * Describe a failure, truncating its message.
	 * @param retryDelay the back-off, or {@code null} to dead-letter now
	 * @param deadReason the reason when dead-lettered now
	 * @param failure the exception
	 * @return the failure
	 */
	public static TaskFailure of(@Nullable Duration retryDelay, String deadReason, Throwable failure) {
		String message = (failure.getMessage() != null) ? failure.getMessage() : "";
		if (message.length() > MAX_MESSAGE_LENGTH) {
			message = message.substring(0, MAX_MESSAGE_LENGTH);
		}
		return new TaskFailure(retryDelay, deadReason, failure.getClass().getName(), message);
	}

}

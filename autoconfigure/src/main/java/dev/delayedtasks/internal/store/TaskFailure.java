package dev.delayedtasks.internal.store;

import java.time.Duration;

import dev.delayedtasks.FailureReason;
import org.jspecify.annotations.Nullable;

/**
 * How a run failed, and what the retry policy decided.
 *
 * @param retryDelay the back-off before the next run, or {@code null} to dead-letter now
 * @param deadReason the dead-letter reason when {@code retryDelay} is {@code null}; with
 * a retry delay, the reason that applies should the store find the task's attempts used
 * up ({@link FailureReason#RETRIES_EXHAUSTED})
 * @param exceptionType the exception's class name
 * @param message the exception's message, truncated to 500 characters
 * @param stackTrace the exception's stack trace, bounded (at most 20 frames per
 * throwable, 4,096 characters in all) and without any exception message, or {@code ""};
 * kept with the dead letter
 * @author delayed-tasks
 * @since 0.1.0
 */
public record TaskFailure(@Nullable Duration retryDelay, FailureReason deadReason, String exceptionType, String message,
		String stackTrace) {

	/** The longest message kept. */
	public static final int MAX_MESSAGE_LENGTH = 500;

	/** The longest stack trace kept, in characters. */
	public static final int MAX_STACK_TRACE_LENGTH = BoundedStackTrace.MAX_LENGTH;

	/**
	 * Create a failure, bringing the stack trace into the shape the error record needs:
	 * no blank lines and at most {@link #MAX_STACK_TRACE_LENGTH} characters.
	 * @param retryDelay the back-off before the next run, or {@code null} to dead-letter
	 * now
	 * @param deadReason the dead-letter reason when {@code retryDelay} is {@code null};
	 * with a retry delay, the reason that applies should the store find the task's
	 * attempts used up ({@link FailureReason#RETRIES_EXHAUSTED})
	 * @param exceptionType the exception's class name
	 * @param message the exception's message, truncated to 500 characters
	 * @param stackTrace the exception's stack trace, bounded (at most 20 frames per
	 * throwable, 4,096 characters in all) and without any exception message, or
	 * {@code ""}; kept with the dead letter
	 */
	public TaskFailure {
		stackTrace = BoundedStackTrace.normalize(stackTrace);
	}

	/**
	 * Create a failure without a stack trace.
	 * @param retryDelay the back-off, or {@code null} to dead-letter now
	 * @param deadReason the reason when dead-lettered now
	 * @param exceptionType the exception's class name
	 * @param message the exception's message
	 */
	public TaskFailure(@Nullable Duration retryDelay, FailureReason deadReason, String exceptionType, String message) {
		this(retryDelay, deadReason, exceptionType, message, "");
	}

	/**
	 * Describe a failure, truncating its message and bounding its stack trace.
	 * @param retryDelay the back-off, or {@code null} to dead-letter now
	 * @param deadReason the reason when dead-lettered now
	 * @param failure the exception
	 * @return the failure
	 */
	public static TaskFailure of(@Nullable Duration retryDelay, FailureReason deadReason, Throwable failure) {
		String message = message(failure);
		if (message.length() > MAX_MESSAGE_LENGTH) {
			message = message.substring(0, MAX_MESSAGE_LENGTH);
		}
		return new TaskFailure(retryDelay, deadReason, failure.getClass().getName(), message,
				BoundedStackTrace.of(failure));
	}

	private static String message(Throwable failure) {
		try {
			String message = failure.getMessage();
			return (message != null) ? message : "";
		}
		catch (RuntimeException | LinkageError | StackOverflowError ex) {
			// User code: a failure must be recorded whatever its getMessage() does.
			return "(getMessage() threw " + ex.getClass().getName() + ")";
		}
	}

}

package dev.delayedtasks;

/**
 * Thrown by a handler for a failure that retrying cannot fix: the task goes to the dead
 * letters at once.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public class NonRetryableTaskException extends DelayedTaskException {

	/**
	 * Create an exception.
	 * @param message why the task cannot succeed
	 */
	public NonRetryableTaskException(String message) {
		super(message);
	}

	/**
	 * Create an exception with a cause.
	 * @param message why the task cannot succeed
	 * @param cause the cause
	 */
	public NonRetryableTaskException(String message, Throwable cause) {
		super(message, cause);
	}

}

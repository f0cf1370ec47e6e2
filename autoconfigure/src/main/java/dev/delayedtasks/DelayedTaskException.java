package dev.delayedtasks;

/**
 * Base class of the exceptions delayed tasks throws.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public class DelayedTaskException extends RuntimeException {

	/**
	 * Create an exception.
	 * @param message what went wrong and what to do
	 */
	public DelayedTaskException(String message) {
		super(message);
	}

	/**
	 * Create an exception with a cause.
	 * @param message what went wrong and what to do
	 * @param cause the cause
	 */
	public DelayedTaskException(String message, Throwable cause) {
		super(message, cause);
	}

}

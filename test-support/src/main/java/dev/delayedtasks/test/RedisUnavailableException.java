package dev.delayedtasks.test;

/**
 * Thrown when a Redis of the requested kind cannot be found or started here.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public class RedisUnavailableException extends RuntimeException {

	/**
	 * Create an exception with a message that says what is missing.
	 * @param message the message
	 */
	public RedisUnavailableException(String message) {
		super(message);
	}

	/**
	 * Create an exception with a message and its cause.
	 * @param message the message
	 * @param cause the cause
	 */
	public RedisUnavailableException(String message, Throwable cause) {
		super(message, cause);
	}

}

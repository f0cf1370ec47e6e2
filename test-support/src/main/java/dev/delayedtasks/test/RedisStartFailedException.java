package dev.delayedtasks.test;

/**
 * Thrown when a Redis that should work here does not: a {@code redis-server} that was
 * started but exited or never answered {@code PING}, a cluster that did not form,
 * Sentinels that did not converge, a configured URL that does not answer. Unlike
 * {@link RedisUnavailableException} (a missing prerequisite, which skips a test), this
 * fails the test, and its message carries the end of the server's log.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public class RedisStartFailedException extends RuntimeException {

	/**
	 * Create an exception with a message that says what failed, with the server's log.
	 * @param message the message
	 */
	public RedisStartFailedException(String message) {
		super(message);
	}

	/**
	 * Create an exception with a message and its cause.
	 * @param message the message
	 * @param cause the cause
	 */
	public RedisStartFailedException(String message, Throwable cause) {
		super(message, cause);
	}

}

package dev.delayedtasks.test;

/**
 * Thrown when a prerequisite of the requested Redis is missing here: no
 * {@code redis-server} binary of that kind, no Docker engine, no
 * {@code DELAYED_TASKS_TEST_REDIS_URL}, no {@code openssl}, a {@code redis-server} built
 * without TLS. {@link RedisServerExtension} skips the test class with the message, which
 * is therefore one line naming what is missing. A server that was found and started but
 * does not work is a {@link RedisStartFailedException} instead.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public class RedisUnavailableException extends RuntimeException {

	/**
	 * Create an exception with a one-line message that says what is missing.
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

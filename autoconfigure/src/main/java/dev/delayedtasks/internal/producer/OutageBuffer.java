package dev.delayedtasks.internal.producer;

import java.time.Duration;

/**
 * How the asynchronous API rides out a Redis outage: tasks submitted while Redis is
 * unreachable wait in memory, at most {@code maxTasks} of them and each at most
 * {@code maxWait}, and are sent in order when it is back. Stopping waits at most
 * {@code shutdownWait} for the tasks accepted and not yet stored, then reports each one
 * left; tasks held this way are lost if the process dies.
 *
 * @param enabled whether tasks are held through an outage; when false, an asynchronous
 * call fails as soon as its Redis call does
 * @param maxTasks the most tasks waiting in memory to be sent, outage or not; a
 * submission beyond it fails at once
 * @param maxWait how long a held task waits for Redis before its call fails
 * @param shutdownWait how long stopping waits for accepted tasks to be stored, whether or
 * not the buffer is enabled
 * @author delayed-tasks
 * @since 0.1.0
 */
public record OutageBuffer(boolean enabled, int maxTasks, Duration maxWait, Duration shutdownWait) {

	/** The wait for accepted tasks when stopping, unless configured otherwise. */
	public static final Duration DEFAULT_SHUTDOWN_WAIT = Duration.ofSeconds(5);

	/** No buffer: asynchronous calls fail with the Redis call that carried them. */
	public static final OutageBuffer DISABLED = disabled(DEFAULT_SHUTDOWN_WAIT);

	/**
	 * Check the limits.
	 * @param enabled whether tasks are held through an outage
	 * @param maxTasks the most tasks waiting in memory, at least 1
	 * @param maxWait how long a held task waits, positive when enabled
	 * @param shutdownWait how long stopping waits, not negative
	 */
	public OutageBuffer {
		if (maxTasks < 1) {
			throw new IllegalArgumentException("maxTasks must be at least 1, was " + maxTasks);
		}
		if (maxWait.isNegative() || (enabled && maxWait.isZero())) {
			throw new IllegalArgumentException("maxWait must be positive, was " + maxWait);
		}
		if (shutdownWait.isNegative()) {
			throw new IllegalArgumentException("shutdownWait must not be negative, was " + shutdownWait);
		}
	}

	/**
	 * A buffer that holds tasks through an outage.
	 * @param maxTasks the most tasks waiting in memory
	 * @param maxWait how long a held task waits for Redis
	 * @param shutdownWait how long stopping waits for accepted tasks to be stored
	 * @return the buffer
	 */
	public static OutageBuffer of(int maxTasks, Duration maxWait, Duration shutdownWait) {
		return new OutageBuffer(true, maxTasks, maxWait, shutdownWait);
	}

	/**
	 * No buffer: asynchronous calls fail with the Redis call that carried them.
	 * @param shutdownWait how long stopping waits for accepted tasks to be stored
	 * @return the setting
	 */
	public static OutageBuffer disabled(Duration shutdownWait) {
		return new OutageBuffer(false, Integer.MAX_VALUE, Duration.ZERO, shutdownWait);
	}

}

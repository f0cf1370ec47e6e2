package dev.delayedtasks.internal.producer;

import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * Redis's time as this producer last read it in a script's reply, carried forward with
 * {@link System#nanoTime()}: the instant a held task's delay ends is taken from it, so
 * that neither this machine's clock nor the time a retry spends in a stopped Redis's
 * socket moves a due time. Off by at most the round trip of the last reply; until a first
 * reply arrives it falls back to this machine's clock.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class RedisClock {

	private volatile @Nullable Reading last;

	/**
	 * A reply of Redis arrived.
	 * @param redisMillis the time in the reply, in epoch milliseconds
	 * @param receivedNanos when it arrived, in {@link System#nanoTime()}
	 */
	void observe(long redisMillis, long receivedNanos) {
		this.last = new Reading(redisMillis, receivedNanos);
	}

	/**
	 * Redis's time at a moment of this process.
	 * @param nanos the moment, in {@link System#nanoTime()}
	 * @return the time of Redis then, in epoch milliseconds
	 */
	long millisAt(long nanos) {
		Reading reading = this.last;
		if (reading == null) {
			return System.currentTimeMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
		}
		return reading.redisMillis + TimeUnit.NANOSECONDS.toMillis(nanos - reading.nanos);
	}

	private record Reading(long redisMillis, long nanos) {
	}

}

package dev.delayedtasks.internal.recurring;

import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * This instance's estimate of the scripts' clock (Redis {@code TIME}, plus the test clock
 * offset under delayed-tasks-test) per queue: the instance clock corrected by the offset
 * the last {@code recur_advance} reply of that queue showed. The recurring planner lists
 * ticks from it, and the script refuses a plan made from a time too far from its own
 * ({@code K}) and hands back its time, so the instance clock, however far off, decides
 * nothing; a good estimate only saves that round trip. Per queue because each queue's
 * partition may live on another Cluster master, with a clock of its own.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
final class RedisTime {

	private final Clock clock;

	private final Map<String, Long> offsets = new ConcurrentHashMap<>();

	RedisTime(Clock clock) {
		this.clock = clock;
	}

	/**
	 * The scripts' time for a queue, as last seen; this instance's clock until a reply of
	 * the queue arrived.
	 * @param queue the queue
	 * @return the estimate
	 */
	Instant now(String queue) {
		return Instant.ofEpochMilli(this.clock.millis() + this.offsets.getOrDefault(queue, 0L));
	}

	/**
	 * A script of the queue replied with its time.
	 * @param queue the queue
	 * @param scriptMillis the script's now, in epoch milliseconds
	 */
	void observe(String queue, long scriptMillis) {
		this.offsets.put(queue, scriptMillis - this.clock.millis());
	}

}

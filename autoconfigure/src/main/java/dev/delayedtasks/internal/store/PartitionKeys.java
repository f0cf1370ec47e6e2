package dev.delayedtasks.internal.store;

import org.jspecify.annotations.Nullable;

/**
 * The Redis keys of one queue partition. All share the hash tag
 * {@code {<queue>:<partition>}}, so every script touches a single Cluster slot:
 * {@code dt:{emails:0}:sched}, {@code dt:{emails:0}:t:<id>}.
 *
 * @param queue the queue
 * @param base the common prefix, for example {@code dt:{emails:0}:}
 * @author delayed-tasks
 * @since 0.1.0
 */
public record PartitionKeys(String queue, String base) {

	/**
	 * The keys of partition 0 of a queue (v1 has one partition per queue).
	 * @param prefix the key prefix, for example {@code dt}
	 * @param queue the queue, already validated
	 * @return the keys
	 */
	public static PartitionKeys of(String prefix, String queue) {
		return new PartitionKeys(queue, prefix + ":{" + queue + ":0}:");
	}

	/**
	 * The schedule ZSET: id to due time.
	 * @return the key
	 */
	public String sched() {
		return this.base + "sched";
	}

	/**
	 * The ready LIST of id hints.
	 * @return the key
	 */
	public String ready() {
		return this.base + "ready";
	}

	/**
	 * The ready LIST of id hints of one priority.
	 * @param priority the priority, -10 to 10
	 * @return the key: {@link #ready()} for priority 0
	 */
	public String ready(int priority) {
		return (priority != 0) ? this.base + "ready:" + priority : ready();
	}

	/**
	 * The ZSET of the priorities other than 0 whose ready list may hold hints (member and
	 * score: the priority).
	 * @return the key
	 */
	public String levels() {
		return this.base + "levels";
	}

	/**
	 * The lease ZSET: id to lease deadline.
	 * @return the key
	 */
	public String lease() {
		return this.base + "lease";
	}

	/**
	 * The dead-letter ZSET: id to dead-letter time.
	 * @return the key
	 */
	public String dead() {
		return this.base + "dead";
	}

	/**
	 * The wake LIST that idle dispatchers block on.
	 * @return the key
	 */
	public String wake() {
		return this.base + "wake";
	}

	/**
	 * The tick LIST that tells the timer owner the earliest deadline changed.
	 * @return the key
	 */
	public String tick() {
		return this.base + "tick";
	}

	/**
	 * The handover LIST: a resigning timer owner pushes a token that wakes a contender
	 * blocked on it.
	 * @return the key
	 */
	public String handover() {
		return this.base + "handover";
	}

	/**
	 * The timer-owner STRING.
	 * @return the key
	 */
	public String timer() {
		return this.base + "timer";
	}

	/**
	 * The counters HASH.
	 * @return the key
	 */
	public String stats() {
		return this.base + "stats";
	}

	/**
	 * The per-minute samples of the counters, for charts ({@code history.lua}).
	 * @return the key
	 */
	public String minutes() {
		return this.base + "hm";
	}

	/**
	 * The per-hour samples of the counters, for charts ({@code history.lua}).
	 * @return the key
	 */
	public String hours() {
		return this.base + "hh";
	}

	/**
	 * The meta HASH: layout version and paused flag.
	 * @return the key
	 */
	public String meta() {
		return this.base + "meta";
	}

	/**
	 * The task's state HASH.
	 * @param id the task id
	 * @return the key
	 */
	public String task(String id) {
		return this.base + "t:" + id;
	}

	/**
	 * The task's payload envelope STRING.
	 * @param id the task id
	 * @return the key
	 */
	public String payload(String id) {
		return this.base + "p:" + id;
	}

	/**
	 * The task's last-error STRING.
	 * @param id the task id
	 * @return the key
	 */
	public String error(String id) {
		return this.base + "e:" + id;
	}

	/**
	 * The task's outcome record HASH, kept for a while after it ended.
	 * @param id the task id
	 * @return the key
	 */
	public String outcome(String id) {
		return this.base + "o:" + id;
	}

	/**
	 * A uniqueness slot, or the partition's placeholder when the digest is {@code null}
	 * (an empty key cannot be routed in a Cluster).
	 * @param digest the unique-key digest, or {@code null}
	 * @return the key
	 */
	public String unique(@Nullable String digest) {
		return this.base + "u:" + ((digest != null) ? digest : "");
	}

	/**
	 * A recurring schedule's HASH: its definition, next tick and window of created
	 * occurrences. Per-minute counters of a schedule, when they come, go under
	 * {@code rc:<id>:}.
	 * @param scheduleId the schedule id
	 * @return the key
	 */
	public String schedule(String scheduleId) {
		return this.base + "r:" + scheduleId;
	}

	/**
	 * The ZSET of this partition's recurring schedules: schedule id to creation time.
	 * @return the key
	 */
	public String recurring() {
		return this.base + "recurring";
	}

}

package dev.delayedtasks.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.delayedtasks.Names;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.script.ScriptClock;
import dev.delayedtasks.internal.store.script.StoreScripts;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.Assert;

/**
 * The test clock of each queue: the offset the scripts add to Redis time, moved forward
 * by {@link DelayedTasksTester#advanceTime}, and what a queue has to do by that clock
 * (the {@code testing/idle.lua} and {@code testing/advanceTime.lua} scripts).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@SuppressWarnings("rawtypes")
final class QueueClock {

	/** The most leases one advance moves along with the clock. */
	private static final int LEASE_LIMIT = 10_000;

	private final StringRedisTemplate redis;

	private final String keyPrefix;

	private final RedisScript<List> idle;

	private final RedisScript<List> advance;

	QueueClock(StringRedisTemplate redis, String keyPrefix) {
		this.redis = redis;
		this.keyPrefix = keyPrefix;
		this.idle = RedisScript.of(StoreScripts.source("testing/idle.lua", ScriptClock.TEST), List.class);
		this.advance = RedisScript.of(StoreScripts.source("testing/advanceTime.lua", ScriptClock.TEST), List.class);
	}

	/**
	 * Move one queue's clock forward and wake its timer.
	 * @param queue the queue
	 * @param amount how far, at least a millisecond
	 * @return the queue's time after the move
	 */
	Instant advance(String queue, Duration amount) {
		PartitionKeys partition = partition(queue);
		List<?> reply = this.redis.execute(this.advance, List.of(partition.meta(), partition.lease(), partition.tick()),
				Long.toString(amount.toMillis()), Integer.toString(LEASE_LIMIT));
		Assert.state(reply != null, "advanceTime returned no reply");
		return Instant.ofEpochMilli(((Number) reply.get(0)).longValue());
	}

	/**
	 * What the queue has to do, by its clock.
	 * @param queue the queue
	 * @return its state
	 */
	QueueState state(String queue) {
		PartitionKeys partition = partition(queue);
		List<?> reply = this.redis.execute(this.idle,
				List.of(partition.sched(), partition.ready(), partition.lease(), partition.meta()));
		Assert.state(reply != null && reply.size() == 6, "idle returned no reply");
		return new QueueState(number(reply, 0), number(reply, 1), number(reply, 2), number(reply, 3),
				number(reply, 4) == 1, number(reply, 5));
	}

	private PartitionKeys partition(String queue) {
		return PartitionKeys.of(this.keyPrefix, Names.checkQueue(queue));
	}

	private static long number(List<?> reply, int index) {
		return ((Number) reply.get(index)).longValue();
	}

}

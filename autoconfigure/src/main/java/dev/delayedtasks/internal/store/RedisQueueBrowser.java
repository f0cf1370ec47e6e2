package dev.delayedtasks.internal.store;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

/**
 * Pages through a queue's tasks by their place in its sorted sets, for operators: the
 * scheduled tasks by due time, the leased ones by lease deadline, and how many fall due
 * within a horizon. Each read is one bounded command on one key ({@code ZRANGE} with a
 * range of at most {@link #MAX_PAGE} entries, or {@code ZCOUNT}, both O(log n + page)),
 * so a page costs the same with a million tasks as with ten.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public final class RedisQueueBrowser {

	/**
	 * The most entries one page reads.
	 */
	public static final int MAX_PAGE = 100;

	private final StringRedisTemplate redis;

	private final String keyPrefix;

	/**
	 * Create a browser.
	 * @param redis the template
	 * @param keyPrefix the key prefix
	 */
	public RedisQueueBrowser(StringRedisTemplate redis, String keyPrefix) {
		this.redis = redis;
		this.keyPrefix = keyPrefix;
	}

	/**
	 * Scheduled tasks, earliest due first.
	 * @param queue the queue
	 * @param offset how many to pass over
	 * @param limit how many to return, at most {@link #MAX_PAGE}
	 * @return the page, with the number of scheduled tasks
	 */
	public Page scheduled(String queue, long offset, int limit) {
		return page(PartitionKeys.of(this.keyPrefix, queue).sched(), offset, limit);
	}

	/**
	 * Leased tasks, earliest lease deadline first.
	 * @param queue the queue
	 * @param offset how many to pass over
	 * @param limit how many to return, at most {@link #MAX_PAGE}
	 * @return the page, with the number of leased tasks
	 */
	public Page leased(String queue, long offset, int limit) {
		return page(PartitionKeys.of(this.keyPrefix, queue).lease(), offset, limit);
	}

	/**
	 * How many scheduled tasks fall due after {@code from} and up to each horizon.
	 * @param queue the queue
	 * @param from the start, exclusive (tasks already due are ready or about to be)
	 * @param horizons the ends, inclusive
	 * @return one count per horizon
	 */
	public List<Long> dueWithin(String queue, Instant from, List<Instant> horizons) {
		String sched = PartitionKeys.of(this.keyPrefix, queue).sched();
		List<Long> counts = new ArrayList<>(horizons.size());
		for (Instant horizon : horizons) {
			Long count = this.redis.opsForZSet()
				.count(sched, Math.nextUp((double) from.toEpochMilli()), horizon.toEpochMilli());
			counts.add((count != null) ? count : 0L);
		}
		return counts;
	}

	/**
	 * A task's stored payload envelope, for operators allowed to see payloads.
	 * @param queue the queue
	 * @param id the task's id
	 * @return the envelope, or {@code null} when the task has none (or it is not a
	 * string)
	 */
	public @Nullable String payload(String queue, String id) {
		return string(PartitionKeys.of(this.keyPrefix, queue).payload(id));
	}

	/**
	 * A task's last error record (reason, exception type, message, bounded stack trace),
	 * as {@link TaskRecords#parse(String)} reads it.
	 * @param queue the queue
	 * @param id the task's id
	 * @return the record, or {@code null} when the task has none (or it is not a string)
	 */
	public @Nullable String error(String queue, String id) {
		return string(PartitionKeys.of(this.keyPrefix, queue).error(id));
	}

	private @Nullable String string(String key) {
		try {
			return this.redis.opsForValue().get(key);
		}
		catch (DataAccessException ex) {
			// A payload key that is not a string (bad data) holds no payload to show.
			String message = NestedExceptionUtils.getMostSpecificCause(ex).getMessage();
			if (message != null && message.contains("WRONGTYPE")) {
				return null;
			}
			throw ex;
		}
	}

	private Page page(String key, long offset, int limit) {
		if (offset < 0 || limit < 1 || limit > MAX_PAGE) {
			throw new IllegalArgumentException(
					"A page starts at 0 or later and holds 1 to " + MAX_PAGE + " entries: " + offset + ", " + limit);
		}
		Set<TypedTuple<String>> tuples = this.redis.opsForZSet().rangeWithScores(key, offset, offset + limit - 1);
		List<Entry> entries = new ArrayList<>();
		if (tuples != null) {
			for (TypedTuple<String> tuple : tuples) {
				if (tuple.getValue() != null && tuple.getScore() != null) {
					entries.add(new Entry(tuple.getValue(), Instant.ofEpochMilli(tuple.getScore().longValue())));
				}
			}
		}
		Long total = this.redis.opsForZSet().zCard(key);
		return new Page(entries, offset, (total != null) ? total : 0);
	}

	/**
	 * A page of tasks.
	 *
	 * @param entries the tasks
	 * @param offset how many were passed over
	 * @param total how many there are
	 */
	public record Page(List<Entry> entries, long offset, long total) {

	}

	/**
	 * A task and its instant: due time or lease deadline.
	 *
	 * @param id the task's id
	 * @param at the instant
	 */
	public record Entry(String id, Instant at) {

	}

}

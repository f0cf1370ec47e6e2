package dev.delayedtasks.internal.store;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

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

	private final SharedConnectionReads reads;

	/**
	 * Create a browser.
	 * @param redis the template
	 * @param keyPrefix the key prefix
	 */
	public RedisQueueBrowser(StringRedisTemplate redis, String keyPrefix) {
		this.redis = redis;
		this.reads = new SharedConnectionReads(redis);
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
	 * Ready tasks in the order claims take them: highest priority first, oldest first
	 * within a priority. A ready list holds hints, and a task cancelled or moved since
	 * leaves its hint until a claim passes over it, so each entry says whether its task
	 * is still ready. Bounded as the other pages: one read of the priorities (at most
	 * 21), their lengths, the ranges the page covers and one field per entry, each group
	 * sent together on the shared connection.
	 * @param queue the queue
	 * @param offset how many hints to pass over
	 * @param limit how many to return, at most {@link #MAX_PAGE}
	 * @return the page, with the number of hints
	 */
	public ReadyPage ready(String queue, long offset, int limit) {
		checkPage(offset, limit);
		PartitionKeys keys = PartitionKeys.of(this.keyPrefix, queue);
		List<Integer> priorities = claimOrder(this.redis.opsForZSet().reverseRange(keys.levels(), 0, -1));
		List<Long> lengths = this.reads.llen(priorities.stream().map(keys::ready).toList());
		long total = 0;
		List<long[]> ranges = new ArrayList<>();
		long skip = offset;
		long wanted = limit;
		for (int i = 0; i < priorities.size(); i++) {
			long length = lengths.get(i);
			total += length;
			if (wanted > 0 && skip < length) {
				long count = Math.min(length - skip, wanted);
				ranges.add(new long[] { priorities.get(i), skip, skip + count - 1 });
				wanted -= count;
				skip = 0;
			}
			else {
				skip = Math.max(0, skip - length);
			}
		}
		List<ReadyEntry> entries = new ArrayList<>();
		for (long[] range : ranges) {
			List<String> ids = this.redis.opsForList().range(keys.ready((int) range[0]), range[1], range[2]);
			for (String id : (ids != null) ? ids : List.<String>of()) {
				entries.add(new ReadyEntry(id, (int) range[0], false));
			}
		}
		List<@Nullable String> states = taskFields(keys, entries.stream().map(ReadyEntry::id).toList(), "s");
		List<ReadyEntry> checked = new ArrayList<>(entries.size());
		for (int i = 0; i < entries.size(); i++) {
			checked.add(new ReadyEntry(entries.get(i).id(), entries.get(i).priority(), "R".equals(states.get(i))));
		}
		return new ReadyPage(checked, offset, total);
	}

	/**
	 * The lease tokens of tasks, sent together on the shared connection:
	 * {@link LeaseHolders} reads the instance that holds each.
	 * @param queue the queue
	 * @param ids the tasks' ids, at most {@link #MAX_PAGE}
	 * @return one token per id, {@code null} for a task not leased (or gone)
	 */
	public List<@Nullable String> leaseTokens(String queue, List<String> ids) {
		if (ids.size() > MAX_PAGE) {
			throw new IllegalArgumentException("At most " + MAX_PAGE + " lease tokens are read at once: " + ids.size());
		}
		return taskFields(PartitionKeys.of(this.keyPrefix, queue), ids, "k");
	}

	// One field of each task's hash; null where the hash or the field is missing, or is
	// not a hash (bad data).
	private List<@Nullable String> taskFields(PartitionKeys keys, List<String> ids, String field) {
		return this.reads.hget(ids.stream().map(keys::task).toList(), field);
	}

	// The priorities of the ready lists as claims take them (includes/priorities.lua):
	// those above 0 from the highest, then 0, then those below 0 from the highest.
	private static List<Integer> claimOrder(@Nullable Set<String> levels) {
		List<Integer> above = new ArrayList<>();
		List<Integer> below = new ArrayList<>();
		for (String level : (levels != null) ? levels : Set.<String>of()) {
			try {
				int priority = Integer.parseInt(level);
				if (priority > 0 && priority <= 10) {
					above.add(priority);
				}
				else if (priority < 0 && priority >= -10) {
					below.add(priority);
				}
			}
			catch (NumberFormatException ex) {
				// Only this library writes levels; a member it did not write names no
				// list.
			}
		}
		List<Integer> order = new ArrayList<>(above);
		order.add(0);
		order.addAll(below);
		return order;
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

	// A key that is not a string (bad data) holds nothing to show.
	private @Nullable String string(String key) {
		return this.reads.get(List.of(key)).get(0);
	}

	private static void checkPage(long offset, int limit) {
		if (offset < 0 || limit < 1 || limit > MAX_PAGE) {
			throw new IllegalArgumentException(
					"A page starts at 0 or later and holds 1 to " + MAX_PAGE + " entries: " + offset + ", " + limit);
		}
	}

	private Page page(String key, long offset, int limit) {
		checkPage(offset, limit);
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
	 * A page of ready hints.
	 *
	 * @param entries the hints, in claim order
	 * @param offset how many were passed over
	 * @param total how many hints the ready lists hold (stale ones included)
	 */
	public record ReadyPage(List<ReadyEntry> entries, long offset, long total) {

	}

	/**
	 * A ready hint.
	 *
	 * @param id the task's id
	 * @param priority the priority of the list it waits in
	 * @param ready whether its task is still ready (else the hint is stale: the task was
	 * cancelled, moved or has run)
	 */
	public record ReadyEntry(String id, int priority, boolean ready) {

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

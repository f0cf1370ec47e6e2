package dev.delayedtasks.internal.admin;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.Names;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.DeadLetterListing;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.RedisQueueBrowser;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.SharedConnectionReads;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskRecords;
import dev.delayedtasks.internal.store.TaskRecords.ErrorRecord;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.Reply;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

/**
 * {@link DeadLetters} on Redis: listing reads the {@code dead} set and each task's error
 * record in one pipeline, passing over members that are not task ids; redrive and purge
 * run their scripts in bounded batches.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisDeadLetters implements DeadLetters {

	private static final Log logger = LogFactory.getLog(RedisDeadLetters.class);

	private static final int BATCH = 500;

	/**
	 * The most members that are not task ids a listing reads past before it returns what
	 * it has.
	 */
	static final int MAX_PASSED_OVER = 1000;

	private static final Duration REPORT_INTERVAL = Duration.ofMinutes(1);

	/** When members that are not task ids were last reported, by queue. */
	private final Map<String, Long> unreadableReportedAt = new ConcurrentHashMap<>();

	private final StoreScripts scripts;

	private final StoreSettings settings;

	private final @Nullable PayloadCodec codec;

	private final RedisQueueBrowser browser;

	private final SharedConnectionReads reads;

	/**
	 * Create the dead letters.
	 * @param scripts the scripts
	 * @param settings limits and durations
	 */
	public RedisDeadLetters(StoreScripts scripts, StoreSettings settings) {
		this(scripts, settings, null);
	}

	/**
	 * Create the dead letters, able to redrive one with a new payload.
	 * @param scripts the scripts
	 * @param settings limits and durations
	 * @param codec encodes a new payload as scheduling does, or {@code null} when
	 * {@link #redrive(String, TaskId, Instant, Object)} is not offered
	 */
	public RedisDeadLetters(StoreScripts scripts, StoreSettings settings, @Nullable PayloadCodec codec) {
		this.scripts = scripts;
		this.settings = settings;
		this.codec = codec;
		this.browser = new RedisQueueBrowser(scripts.template(), settings.keyPrefix());
		this.reads = new SharedConnectionReads(scripts.template());
	}

	@Override
	public List<DeadLetter> list(String queue, int limit) {
		return listing(queue, limit).letters();
	}

	/**
	 * The newest dead letters of a queue, newest first, and how many members of its dead
	 * set were passed over because no {@link TaskId} can hold them (written into Redis by
	 * something else than this library). Such members never make the listing fail: they
	 * are skipped, counted, and reported in a log line at most once a minute per queue.
	 * @param queue the queue
	 * @param limit the most dead letters to return
	 * @return the dead letters and the count of members passed over
	 */
	public DeadLetterListing listing(String queue, int limit) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		if (limit <= 0) {
			return new DeadLetterListing(List.of(), 0);
		}
		try {
			List<TypedTuple<String>> ordered = new ArrayList<>();
			int unreadable = newest(keys, limit, ordered);
			if (unreadable > 0) {
				reportUnreadable(queue, unreadable);
			}
			return new DeadLetterListing(letters(queue, keys, ordered), unreadable);
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException(
					"Redis failed to list the dead letters of queue '" + queue + "': " + ex.getMessage(), null, ex);
		}
	}

	/**
	 * Dead letters dead-lettered at or before an instant, newest first, passing over the
	 * first {@code skip} of them: for walking a large dead set in bounded steps that
	 * removals by others cannot shift (the next step starts at the last dead-letter time
	 * read, passing over what it read there and left), and that never meet a dead letter
	 * newer than their start again.
	 * @param queue the queue
	 * @param maxDeadAt the newest dead-letter time to read, epoch milliseconds
	 * @param skip how many dead letters of the newest time read to pass over
	 * @param limit the most members to read
	 * @return the page
	 */
	public DeadLetterPage page(String queue, double maxDeadAt, long skip, int limit) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		if (limit <= 0 || skip < 0) {
			throw new IllegalArgumentException(
					"A page reads 1 or more members from 0 or more on: " + limit + ", " + skip);
		}
		try {
			Set<TypedTuple<String>> read = this.scripts.template()
				.opsForZSet()
				.reverseRangeByScoreWithScores(keys.dead(), Double.NEGATIVE_INFINITY, maxDeadAt, skip, limit);
			List<TypedTuple<String>> ordered = new ArrayList<>();
			long last = -1;
			int atLast = 0;
			if (read != null) {
				for (TypedTuple<String> entry : read) {
					long score = (entry.getScore() != null) ? entry.getScore().longValue() : -1;
					atLast = (score == last) ? atLast + 1 : 1;
					last = score;
					if (idOf(entry.getValue()) != null) {
						ordered.add(entry);
					}
				}
			}
			int members = (read != null) ? read.size() : 0;
			if (members > ordered.size()) {
				reportUnreadable(queue, members - ordered.size());
			}
			return new DeadLetterPage(letters(queue, keys, ordered), members, last, atLast);
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException(
					"Redis failed to list the dead letters of queue '" + queue + "': " + ex.getMessage(), null, ex);
		}
	}

	private List<DeadLetter> letters(String queue, PartitionKeys keys, List<TypedTuple<String>> ordered) {
		if (ordered.isEmpty()) {
			return List.of();
		}
		// On the shared connection: a pipeline would open a connection of its own for
		// every listing. A corrupt dead letter whose task key is not a hash reads as
		// null and cannot hide the others.
		List<String> ids = ordered.stream().map(TypedTuple::getValue).toList();
		List<@Nullable String> attempts = this.reads.hget(ids.stream().map(keys::task).toList(), "a");
		List<@Nullable String> errors = this.reads.get(ids.stream().map(keys::error).toList());
		List<DeadLetter> letters = new ArrayList<>(ordered.size());
		for (int i = 0; i < ordered.size(); i++) {
			TypedTuple<String> entry = ordered.get(i);
			ErrorRecord error = TaskRecords.parse(errors.get(i));
			letters.add(new DeadLetter(TaskId.of(entry.getValue()), queue,
					(error != null) ? error.reason() : FailureReason.UNKNOWN.value(),
					(error != null) ? error.exceptionType() : "", (error != null) ? error.message() : "",
					(int) TaskRecords.number(attempts.get(i)), Instant.ofEpochMilli(entry.getScore().longValue()),
					(error != null) ? error.stackTrace() : ""));
		}
		return letters;
	}

	/**
	 * Collect the newest {@code limit} members that are task ids, reading on past the
	 * ones that are not, but never more than {@link #MAX_PASSED_OVER} of those.
	 * @param keys the partition's keys
	 * @param limit how many to collect
	 * @param ordered where to add them, newest first
	 * @return how many members were passed over
	 */
	private int newest(PartitionKeys keys, int limit, List<TypedTuple<String>> ordered) {
		int unreadable = 0;
		long offset = 0;
		while (ordered.size() < limit && unreadable < MAX_PASSED_OVER) {
			// Read more at a time the more members turn out to be unreadable.
			long count = Math.max(limit - ordered.size(), unreadable);
			Set<TypedTuple<String>> entries = this.scripts.template()
				.opsForZSet()
				.reverseRangeWithScores(keys.dead(), offset, offset + count - 1);
			if (entries == null || entries.isEmpty()) {
				break;
			}
			for (TypedTuple<String> entry : entries) {
				if (ordered.size() == limit) {
					break;
				}
				if (idOf(entry.getValue()) != null) {
					ordered.add(entry);
				}
				else {
					unreadable++;
				}
			}
			offset += entries.size();
			if (entries.size() < count) {
				break;
			}
		}
		return unreadable;
	}

	private void reportUnreadable(String queue, int unreadable) {
		long now = System.nanoTime();
		Long last = this.unreadableReportedAt.get(queue);
		if (last != null && now - last < REPORT_INTERVAL.toNanos()) {
			return;
		}
		this.unreadableReportedAt.put(queue, now);
		// The members themselves are not logged: they can hold anything.
		logger.warn(unreadable + " member(s) of the dead letters of queue '" + queue
				+ "' are not task ids and were left out of a listing; they were not written by delayed-tasks, "
				+ "and purging the queue's dead letters removes them");
	}

	/**
	 * The id of a dead letter, or {@code null} when it breaks the id rule: claim
	 * dead-letters such a task as corrupt, and one of them must not make the whole list
	 * fail. It cannot be named by a {@link TaskId}, so purging or trimming removes it.
	 * @param value a member of the dead-letter ZSET
	 * @return its id, or {@code null}
	 */
	private static @Nullable TaskId idOf(String value) {
		try {
			return TaskId.of(value);
		}
		catch (InvalidTaskRequestException ex) {
			return null;
		}
	}

	@Override
	public long count(String queue) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		try {
			Long count = this.scripts.template().opsForZSet().zCard(keys.dead());
			return (count != null) ? count : 0;
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException(
					"Redis failed to count the dead letters of queue '" + queue + "': " + ex.getMessage(), null, ex);
		}
	}

	@Override
	public boolean redrive(String queue, TaskId id) {
		return redrive(queue, id.value(), 0).number(1) == 1;
	}

	@Override
	public Optional<Instant> deadAt(String queue, TaskId id) {
		Double score = this.scripts.template()
			.opsForZSet()
			.score(this.settings.keys(Names.checkQueue(queue)).dead(), id.value());
		return (score != null) ? Optional.of(Instant.ofEpochMilli(score.longValue())) : Optional.empty();
	}

	@Override
	public boolean redrive(String queue, TaskId id, Instant deadAt, @Nullable Object payload) {
		PayloadCodec payloads = this.codec;
		if (payloads == null) {
			throw new UnsupportedOperationException("These dead letters were made without a payload codec");
		}
		String old = this.browser.payload(Names.checkQueue(queue), id.value());
		if (old == null) {
			return false;
		}
		Map<String, String> headers;
		try {
			headers = payloads.read(old).headers();
		}
		catch (IllegalArgumentException ex) {
			// An envelope that does not read keeps no headers: the new payload is all
			// there is.
			headers = Map.of();
		}
		String envelope = payloads.envelope(queue, payload, headers);
		// The script compares the dead-letter time: a dead letter redriven (and perhaps
		// edited) since is left alone.
		return redrive(queue, id.value(), 0, envelope, Long.toString(deadAt.toEpochMilli())).number(1) == 1;
	}

	@Override
	public Optional<String> payload(String queue, TaskId id) {
		PayloadCodec payloads = this.codec;
		if (payloads == null) {
			throw new UnsupportedOperationException("These dead letters were made without a payload codec");
		}
		if (this.scripts.template()
			.opsForZSet()
			.score(this.settings.keys(Names.checkQueue(queue)).dead(), id.value()) == null) {
			return Optional.empty();
		}
		String stored = this.browser.payload(Names.checkQueue(queue), id.value());
		if (stored == null) {
			return Optional.empty();
		}
		return Optional.of(payloads.bodyJson(stored));
	}

	@Override
	public boolean delete(String queue, TaskId id) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		Reply reply = new Reply(this.scripts.run(Script.PURGE, List.of(keys.dead(), keys.stats()),
				List.of(keys.base(), "one", "1", "0", "0", id.value()), queue, id.value()));
		return reply.number(1) == 1;
	}

	@Override
	public long redriveAll(String queue) {
		long moved = 0;
		long offset = 0;
		while (true) {
			Reply reply = redrive(queue, "", offset);
			moved += reply.number(1);
			offset += reply.number(2);
			if (reply.number(1) + reply.number(2) == 0) {
				return moved;
			}
		}
	}

	private Reply redrive(String queue, String id, long offset) {
		return redrive(queue, id, offset, "", "");
	}

	private Reply redrive(String queue, String id, long offset, String newPayload, String deadAt) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		return new Reply(this.scripts.run(Script.REDRIVE, List.of(keys.dead(), keys.ready(), keys.wake(), keys.stats()),
				List.of(keys.base(), Integer.toString(this.settings.fanoutBatch()), Integer.toString(BATCH),
						Long.toString(offset), id, newPayload, deadAt),
				queue, id.isEmpty() ? null : id));
	}

	@Override
	public long purge(String queue) {
		return runPurge(queue, "all", BATCH, Integer.MAX_VALUE);
	}

	/**
	 * Delete the dead letters of a queue that are over the configured age or count.
	 * @param queue the queue
	 * @return how many were deleted
	 */
	public long trim(String queue) {
		return runPurge(queue, "trim", BATCH, Integer.MAX_VALUE);
	}

	/**
	 * Delete the dead letters of a queue that are over the configured age or count, with
	 * bounded work: at most {@code maxCalls} script calls of at most
	 * {@link StoreSettings#trimLimit()} deletions each. What is left over stays for the
	 * next call.
	 * @param queue the queue
	 * @param maxCalls the most script calls
	 * @return how many were deleted
	 */
	public long trim(String queue, int maxCalls) {
		return runPurge(queue, "trim", this.settings.trimLimit(), maxCalls);
	}

	private long runPurge(String queue, String mode, int limit, int maxCalls) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		long deleted = 0;
		for (int call = 0; call < maxCalls; call++) {
			Reply reply = new Reply(this.scripts.run(Script.PURGE, List.of(keys.dead(), keys.stats()),
					List.of(keys.base(), mode, Integer.toString(limit),
							RedisTaskStore.millis(this.settings.deadLetterMaxAge()),
							Integer.toString(this.settings.deadLetterMaxCount())),
					queue, null));
			deleted += reply.number(1);
			if (limit <= 0 || reply.number(1) < limit) {
				break;
			}
		}
		return deleted;
	}

	/**
	 * A page of dead letters by dead-letter time.
	 *
	 * @param letters the dead letters read, newest first
	 * @param read the members read, task ids or not
	 * @param lastDeadAt the dead-letter time of the last member read, or -1 when none
	 * @param readAtLast how many of the members read have that time
	 */
	public record DeadLetterPage(List<DeadLetter> letters, int read, long lastDeadAt, int readAtLast) {

	}

}

package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.delayedtasks.internal.store.script.Reply;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

/**
 * A queue's counters of created, succeeded, retried and dead-lettered tasks over time,
 * kept in Redis with bounded memory: a sample per minute for {@link #MINUTES_KEPT}
 * minutes and per hour for {@link #HOURS_KEPT} hours ({@code history.lua}), taken by
 * every instance that handles the queue (the first in each period wins), and none while
 * the counters do not move. Read back as the number of each in every period, for charts
 * on any instance.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public final class RedisQueueHistory {

	/** A day of minutes. */
	public static final int MINUTES_KEPT = 24 * 60;

	/** A month of hours. */
	public static final int HOURS_KEPT = 31 * 24;

	private final StoreScripts scripts;

	private final StoreSettings settings;

	/**
	 * Create the history.
	 * @param scripts the scripts
	 * @param settings the key prefix
	 */
	public RedisQueueHistory(StoreScripts scripts, StoreSettings settings) {
		this.scripts = scripts;
		this.settings = settings;
	}

	/**
	 * Record the queue's counters for the current minute and hour of Redis time, unless
	 * they are recorded already or have not moved.
	 * @param queue the queue
	 * @return whether a minute was recorded
	 */
	public boolean record(String queue) {
		PartitionKeys keys = this.settings.keys(queue);
		Reply reply = new Reply(this.scripts.run(Script.HISTORY, List.of(keys.stats(), keys.minutes(), keys.hours()),
				List.of(Integer.toString(MINUTES_KEPT), Integer.toString(HOURS_KEPT)), queue, null));
		return reply.number(1) == 1;
	}

	/**
	 * The counts per minute over a span that ends now.
	 * @param queue the queue
	 * @param span how far back, at most {@link #MINUTES_KEPT} minutes
	 * @param now the end of the span
	 * @return one entry per minute with samples on both sides, oldest first
	 */
	public List<Period> perMinute(String queue, Duration span, Instant now) {
		return read(this.settings.keys(queue).minutes(), Duration.ofMinutes(1), span, now);
	}

	/**
	 * The counts per hour over a span that ends now.
	 * @param queue the queue
	 * @param span how far back, at most {@link #HOURS_KEPT} hours
	 * @param now the end of the span
	 * @return one entry per hour with samples on both sides, oldest first
	 */
	public List<Period> perHour(String queue, Duration span, Instant now) {
		return read(this.settings.keys(queue).hours(), Duration.ofHours(1), span, now);
	}

	private List<Period> read(String key, Duration period, Duration span, Instant now) {
		long last = now.toEpochMilli() / period.toMillis();
		long first = last - span.toMillis() / period.toMillis();
		// One sample before the span, for the difference that gives its first period.
		Set<TypedTuple<String>> samples = this.scripts.template()
			.opsForZSet()
			.rangeByScoreWithScores(key, first - 1, last);
		List<Period> periods = new ArrayList<>();
		long @Nullable [] previous = null;
		long previousIndex = 0;
		if (samples != null) {
			for (TypedTuple<String> sample : samples) {
				long[] counts = parse(sample.getValue());
				if (counts == null || sample.getScore() == null) {
					continue;
				}
				long index = sample.getScore().longValue();
				// Counters that went down were reset (their hash lost or deleted): the
				// series starts again from this
				// sample rather than showing negative counts.
				if (previous != null && index > previousIndex && !wentDown(previous, counts)) {
					// Spread over the periods between two samples: none were written
					// while nothing moved.
					long periodsBetween = index - previousIndex;
					periods.add(new Period(Instant.ofEpochMilli(index * period.toMillis()),
							(counts[0] - previous[0]) / (double) periodsBetween,
							(counts[1] - previous[1]) / (double) periodsBetween,
							(counts[2] + counts[3] - previous[2] - previous[3]) / (double) periodsBetween,
							(counts[3] - previous[3]) / (double) periodsBetween));
				}
				previous = counts;
				previousIndex = index;
			}
		}
		return periods;
	}

	private static boolean wentDown(long[] previous, long[] counts) {
		for (int i = 0; i < counts.length; i++) {
			if (counts[i] < previous[i]) {
				return true;
			}
		}
		return false;
	}

	private static long @Nullable [] parse(@Nullable String member) {
		if (member == null) {
			return null;
		}
		String[] parts = member.split(":");
		if (parts.length != 5) {
			return null;
		}
		long[] counts = new long[4];
		try {
			for (int i = 0; i < 4; i++) {
				counts[i] = Long.parseLong(parts[i + 1]);
			}
		}
		catch (NumberFormatException ex) {
			return null;
		}
		return counts;
	}

	/**
	 * What happened in one period (a mean when samples were periods apart).
	 *
	 * @param end the period's end
	 * @param created tasks created
	 * @param succeeded runs that succeeded
	 * @param failed runs that failed (retried or dead-lettered)
	 * @param deadLettered tasks dead-lettered
	 */
	public record Period(Instant end, double created, double succeeded, double failed, double deadLettered) {

	}

}

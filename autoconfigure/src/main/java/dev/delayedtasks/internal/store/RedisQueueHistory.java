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
		return record(queue, new long[LatenessBuckets.COUNT]);
	}

	/**
	 * Add the lateness of runs started since the last call to the queue's counters, then
	 * record them for the current minute and hour of Redis time, unless they are recorded
	 * already or have not moved.
	 * @param queue the queue
	 * @param lateness runs started per {@link LatenessBuckets} bucket
	 * @return whether a minute was recorded
	 */
	public boolean record(String queue, long[] lateness) {
		if (lateness.length != LatenessBuckets.COUNT) {
			throw new IllegalArgumentException(
					"Lateness counts come in " + LatenessBuckets.COUNT + " buckets, not " + lateness.length);
		}
		boolean any = false;
		StringBuilder counts = new StringBuilder();
		for (long count : lateness) {
			any |= count != 0;
			counts.append((counts.length() > 0) ? "," : "").append(count);
		}
		PartitionKeys keys = this.settings.keys(queue);
		Reply reply = new Reply(this.scripts.run(Script.HISTORY, List.of(keys.stats(), keys.minutes(), keys.hours()),
				List.of(Integer.toString(MINUTES_KEPT), Integer.toString(HOURS_KEPT), any ? counts.toString() : ""),
				queue, null));
		return reply.number(1) == 1;
	}

	/**
	 * The lateness of the runs started over a span that ends now, from the first and the
	 * last sample in it (to a minute: the samples are per minute).
	 * @param queue the queue
	 * @param span how far back, at most {@link #MINUTES_KEPT} minutes
	 * @param now the end of the span
	 * @return the lateness, with {@code null} percentiles when no run started
	 */
	public Lateness lateness(String queue, Duration span, Instant now) {
		return lateness(samples(this.settings.keys(queue).minutes(), Duration.ofMinutes(1), span, now));
	}

	/**
	 * The counts per minute over a span that ends now and the lateness over it, from one
	 * read of the samples: {@link #perMinute} and {@link #lateness} together.
	 * @param queue the queue
	 * @param span how far back, at most {@link #MINUTES_KEPT} minutes
	 * @param now the end of the span
	 * @return the periods and the lateness
	 */
	public Recent recent(String queue, Duration span, Instant now) {
		List<Sample> samples = samples(this.settings.keys(queue).minutes(), Duration.ofMinutes(1), span, now);
		return new Recent(periods(samples, Duration.ofMinutes(1)), lateness(samples));
	}

	private static Lateness lateness(List<Sample> samples) {
		long[] first = null;
		long[] last = null;
		for (Sample sample : samples) {
			// Samples written before lateness was kept (a rolling deploy may still add
			// some) have none: the span's lateness runs between those that have it.
			if (sample.counts().length <= 4) {
				continue;
			}
			if (first == null || wentDown(last, sample.counts())) {
				first = sample.counts();
			}
			last = sample.counts();
		}
		long[] started = new long[LatenessBuckets.COUNT];
		if (first != null && last != null && first.length == last.length && last.length > 4) {
			for (int i = 0; i < started.length; i++) {
				started[i] = last[4 + i] - first[4 + i];
			}
		}
		return Lateness.of(started);
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
		return periods(samples(key, period, span, now), period);
	}

	private static List<Period> periods(List<Sample> samples, Duration period) {
		List<Period> periods = new ArrayList<>();
		long @Nullable [] previous = null;
		long previousIndex = 0;
		for (Sample sample : samples) {
			long[] counts = sample.counts();
			long index = sample.index();
			// Counters that went down were reset (their hash lost or deleted): the series
			// starts again from this sample rather than showing negative counts.
			if (previous != null && index > previousIndex && !wentDown(previous, counts)) {
				// Spread over the periods between two samples: none were written while
				// nothing moved.
				long periodsBetween = index - previousIndex;
				long[] started = new long[LatenessBuckets.COUNT];
				if (counts.length > 4 && previous.length == counts.length) {
					for (int i = 0; i < started.length; i++) {
						started[i] = counts[4 + i] - previous[4 + i];
					}
				}
				Lateness lateness = Lateness.of(started);
				periods.add(new Period(Instant.ofEpochMilli(index * period.toMillis()),
						(counts[0] - previous[0]) / (double) periodsBetween,
						(counts[1] - previous[1]) / (double) periodsBetween,
						(counts[2] + counts[3] - previous[2] - previous[3]) / (double) periodsBetween,
						(counts[3] - previous[3]) / (double) periodsBetween, lateness.p50Millis(),
						lateness.p99Millis()));
			}
			previous = counts;
			previousIndex = index;
		}
		return periods;
	}

	private List<Sample> samples(String key, Duration period, Duration span, Instant now) {
		long last = now.toEpochMilli() / period.toMillis();
		// The span's periods end after its start: the sample at its start is the base of
		// the difference that gives the first.
		long first = last - span.toMillis() / period.toMillis();
		Set<TypedTuple<String>> read = this.scripts.template().opsForZSet().rangeByScoreWithScores(key, first, last);
		List<Sample> samples = new ArrayList<>();
		if (read != null) {
			for (TypedTuple<String> sample : read) {
				long[] counts = parse(sample.getValue());
				if (counts != null && sample.getScore() != null) {
					samples.add(new Sample(sample.getScore().longValue(), counts));
				}
			}
		}
		return samples;
	}

	private static boolean wentDown(long @Nullable [] previous, long[] counts) {
		if (previous == null) {
			return false;
		}
		for (int i = 0; i < Math.min(previous.length, counts.length); i++) {
			if (counts[i] < previous[i]) {
				return true;
			}
		}
		return false;
	}

	// '<period>:<enq>:<done>:<retry>:<dead>' and, since lateness is kept,
	// ':<l1>,...,<l16>'.
	private static long @Nullable [] parse(@Nullable String member) {
		if (member == null) {
			return null;
		}
		String[] parts = member.split(":");
		if (parts.length != 5 && parts.length != 6) {
			return null;
		}
		String[] lateness = (parts.length == 6) ? parts[5].split(",") : new String[0];
		if (lateness.length != 0 && lateness.length != LatenessBuckets.COUNT) {
			return null;
		}
		long[] counts = new long[4 + lateness.length];
		try {
			for (int i = 0; i < 4; i++) {
				counts[i] = Long.parseLong(parts[i + 1]);
			}
			for (int i = 0; i < lateness.length; i++) {
				counts[4 + i] = Long.parseLong(lateness[i]);
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
	 * @param latenessP50Millis the median lateness of the runs started, to its
	 * {@link LatenessBuckets} bound, or {@code null} when none started
	 * @param latenessP99Millis the 99th percentile, the same way
	 */
	public record Period(Instant end, double created, double succeeded, double failed, double deadLettered,
			@Nullable Long latenessP50Millis, @Nullable Long latenessP99Millis) {

	}

	/**
	 * The lateness of the runs started over a span.
	 *
	 * @param started how many runs started
	 * @param p50Millis the median lateness, to its {@link LatenessBuckets} bound
	 * ({@link LatenessBuckets#ABOVE_MILLIS}: more than a minute), or {@code null} when
	 * none started
	 * @param p99Millis the 99th percentile, the same way
	 */
	public record Lateness(long started, @Nullable Long p50Millis, @Nullable Long p99Millis) {

		static Lateness of(long[] started) {
			long total = 0;
			for (long count : started) {
				total += Math.max(0, count);
			}
			return new Lateness(total, LatenessBuckets.percentile(started, 0.5),
					LatenessBuckets.percentile(started, 0.99));
		}

	}

	/**
	 * A span's counts per minute and its lateness.
	 *
	 * @param perMinute one entry per minute with samples on both sides, oldest first
	 * @param lateness the lateness of the runs started over the span
	 */
	public record Recent(List<Period> perMinute, Lateness lateness) {

	}

	private record Sample(long index, long[] counts) {

	}

}

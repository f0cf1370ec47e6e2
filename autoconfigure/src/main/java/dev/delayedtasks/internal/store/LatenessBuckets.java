package dev.delayedtasks.internal.store;

import org.jspecify.annotations.Nullable;

/**
 * The buckets a queue's lateness (a task's start minus its due time) is counted in, for
 * the history kept in Redis: counts per bucket add up across instances and periods, so
 * percentiles of any period come from the differences of two samples, to the bucket's
 * bound. Bucket {@code i} counts lateness up to {@link #BOUNDS_MILLIS}{@code [i]}; the
 * last counts what is above the largest bound.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public final class LatenessBuckets {

	/**
	 * The upper bounds of the buckets, in milliseconds.
	 */
	static final long[] BOUNDS_MILLIS = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000,
			60_000 };

	/**
	 * How many buckets there are: one per bound and one above them.
	 */
	public static final int COUNT = BOUNDS_MILLIS.length + 1;

	/**
	 * What a percentile above the largest bound reads as: more than a minute.
	 */
	public static final long ABOVE_MILLIS = 60_001;

	private LatenessBuckets() {
	}

	/**
	 * The bucket of a lateness.
	 * @param millis the lateness in milliseconds (a start before its due time counts as
	 * 0)
	 * @return the bucket's index
	 */
	public static int of(long millis) {
		for (int i = 0; i < BOUNDS_MILLIS.length; i++) {
			if (millis <= BOUNDS_MILLIS[i]) {
				return i;
			}
		}
		return BOUNDS_MILLIS.length;
	}

	/**
	 * A percentile of counts per bucket, as the bound of the bucket it falls in.
	 * @param counts the counts per bucket
	 * @param fraction the percentile, such as 0.99
	 * @return the bucket's bound in milliseconds ({@link #ABOVE_MILLIS} above the
	 * largest), or {@code null} when nothing was counted
	 */
	public static @Nullable Long percentile(long[] counts, double fraction) {
		long total = 0;
		for (long count : counts) {
			total += Math.max(0, count);
		}
		if (total == 0) {
			return null;
		}
		long rank = (long) Math.ceil(fraction * total);
		long seen = 0;
		for (int i = 0; i < counts.length; i++) {
			seen += Math.max(0, counts[i]);
			if (seen >= rank) {
				return (i < BOUNDS_MILLIS.length) ? BOUNDS_MILLIS[i] : ABOVE_MILLIS;
			}
		}
		return ABOVE_MILLIS;
	}

}

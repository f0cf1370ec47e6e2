package dev.delayedtasks.internal.store;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LatenessBuckets}: each lateness in the bucket of the first bound at or above it,
 * early starts in the first, more than a minute in the last; percentiles to the bound of
 * the bucket their rank falls in.
 */
class LatenessBucketsTests {

	@Test
	void aLatenessFallsInTheBucketOfTheFirstBoundAtOrAboveIt() {
		assertThat(LatenessBuckets.of(-40)).as("started before its due time").isZero();
		assertThat(LatenessBuckets.of(0)).isZero();
		assertThat(LatenessBuckets.of(1)).isZero();
		assertThat(LatenessBuckets.of(2)).isEqualTo(1);
		assertThat(LatenessBuckets.of(3)).isEqualTo(2);
		assertThat(LatenessBuckets.of(60_000)).isEqualTo(LatenessBuckets.COUNT - 2);
		assertThat(LatenessBuckets.of(60_001)).isEqualTo(LatenessBuckets.COUNT - 1);
		assertThat(LatenessBuckets.of(Long.MAX_VALUE)).isEqualTo(LatenessBuckets.COUNT - 1);
	}

	@Test
	void percentilesAreTheBoundsOfTheBucketsTheirRanksFallIn() {
		long[] counts = new long[LatenessBuckets.COUNT];
		assertThat(LatenessBuckets.percentile(counts, 0.5)).isNull();
		counts[LatenessBuckets.of(5)] = 98;
		counts[LatenessBuckets.of(500)] = 2;
		assertThat(LatenessBuckets.percentile(counts, 0.5)).isEqualTo(5L);
		assertThat(LatenessBuckets.percentile(counts, 0.98)).isEqualTo(5L);
		assertThat(LatenessBuckets.percentile(counts, 0.99)).isEqualTo(500L);
		counts[LatenessBuckets.COUNT - 1] = 1000;
		assertThat(LatenessBuckets.percentile(counts, 0.5)).isEqualTo(LatenessBuckets.ABOVE_MILLIS);
		// Negative differences (counters reset) count as none.
		long[] reset = new long[LatenessBuckets.COUNT];
		reset[0] = -5;
		reset[3] = 1;
		assertThat(LatenessBuckets.percentile(reset, 0.99)).isEqualTo(10L);
	}

}

package dev.delayedtasks;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A {@link RateLimit} is read from and written as {@code count/window}, and neither it
 * nor {@link QueueLimits} can hold a limit that lets nothing through or one Redis cannot
 * measure.
 */
class RateLimitTests {

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "100/1s, 100, 1000", "5/500ms, 5, 500", "600/1m, 600, 60000", "1/2h, 1, 7200000", "1/1ms, 1, 1",
			"2147483647/1s, 2147483647, 1000" })
	void parseReadsWhatToStringWrites(String text, int count, long windowMillis) {
		RateLimit limit = RateLimit.parse(text);
		assertThat(limit.count()).isEqualTo(count);
		assertThat(limit.window()).isEqualTo(Duration.ofMillis(windowMillis));
		assertThat(limit).hasToString(text);
		assertThat(RateLimit.parse(limit.toString())).isEqualTo(limit);
		assertThat(RateLimit.valueOf(text)).isEqualTo(limit);
	}

	@Test
	void aWindowWithoutAnAmountIsOneOfItsUnit() {
		assertThat(RateLimit.parse("100/s")).isEqualTo(RateLimit.parse("100/1s"))
			.isEqualTo(new RateLimit(100, Duration.ofSeconds(1)))
			.hasToString("100/1s");
		assertThat(RateLimit.parse("3/m")).isEqualTo(new RateLimit(3, Duration.ofMinutes(1)));
		assertThat(RateLimit.parse("3/ms")).isEqualTo(new RateLimit(3, Duration.ofMillis(1)));
	}

	@ParameterizedTest(name = "{0} is written {1}")
	@CsvSource({ "1000/1000ms, 1000/1s", "10/60s, 10/1m", "10/90s, 10/90s", "10/120m, 10/2h", "10/1500ms, 10/1500ms",
			"10/3600s, 10/1h" })
	void toStringWritesTheWindowInTheLargestUnitThatDividesIt(String text, String written) {
		assertThat(RateLimit.parse(text)).hasToString(written);
		assertThat(RateLimit.parse(written)).isEqualTo(RateLimit.parse(text));
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "0/1s", "10/0s", "10/0ms", "abc", "10/1x", "10", "/1s", "10/", "-1/1s", "10/-1s", "1.5/1s",
			"2147483648/1s", "10 per 1s" })
	void parseRejectsWhatIsNotARateLimitNamingTheText(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimit.parse(text))
			.withMessageContaining("'" + text + "' is not a rate limit");
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimit.valueOf(text))
			.withMessageContaining("'" + text + "' is not a rate limit");
	}

	@ParameterizedTest(name = "[{0}]")
	@NullAndEmptySource
	void parseRejectsNullAndEmptyTextWithAMessageNotANullPointerException(String text) {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimit.parse(text))
			.withMessageContaining("'" + text + "' is not a rate limit")
			.withMessageContaining("100/1s");
	}

	@Test
	void constructorRejectsACountBelowOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RateLimit(0, Duration.ofSeconds(1)))
			.withMessageContaining("count must be at least 1");
		assertThatIllegalArgumentException().isThrownBy(() -> new RateLimit(-5, Duration.ofSeconds(1)))
			.withMessageContaining("count must be at least 1");
	}

	@Test
	void constructorRejectsAWindowShorterThanOneMillisecondOrNotInWholeMilliseconds() {
		for (Duration window : new Duration[] { Duration.ZERO, Duration.ofMillis(-1), Duration.ofNanos(999_999),
				Duration.ofNanos(1_500_000), Duration.ofSeconds(1).plusNanos(1), Duration.ofDays(366).plusMillis(1),
				Duration.ofHours(3_000_000) }) {
			assertThatIllegalArgumentException().as("window %s", window)
				.isThrownBy(() -> new RateLimit(10, window))
				.withMessageContaining("window must be at least 1ms, at most 366 days and in whole milliseconds");
		}
		assertThatIllegalArgumentException().isThrownBy(() -> new RateLimit(10, null))
			.withMessageContaining("window must be at least 1ms");
		assertThat(new RateLimit(10, Duration.ofMillis(1)).window()).isEqualTo(Duration.ofMillis(1));
	}

	@Test
	void queueLimitsRejectAGlobalConcurrencyBelowOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> new QueueLimits(null, 0))
			.withMessageContaining("global concurrency must be at least 1");
		assertThatIllegalArgumentException().isThrownBy(() -> new QueueLimits(RateLimit.parse("10/1s"), -1))
			.withMessageContaining("global concurrency must be at least 1");
		assertThat(new QueueLimits(null, 1).globalConcurrency()).isEqualTo(1);
	}

	@Test
	void queueLimitsAreLimitedWhenEitherLimitIsSet() {
		assertThat(QueueLimits.NONE).isEqualTo(new QueueLimits(null, null));
		assertThat(QueueLimits.NONE.limited()).isFalse();
		assertThat(new QueueLimits(RateLimit.parse("1/1s"), null).limited()).isTrue();
		assertThat(new QueueLimits(null, 3).limited()).isTrue();
		assertThat(new QueueLimits(RateLimit.parse("1/1s"), 3).limited()).isTrue();
	}

}

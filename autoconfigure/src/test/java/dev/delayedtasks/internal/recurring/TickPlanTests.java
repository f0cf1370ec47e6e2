package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.time.Instant;

import dev.delayedtasks.RecurringSchedule;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ticks an instance passes to Redis: from the schedule's next uncreated tick to a few
 * beyond the clock margin, old ticks counted rather than listed.
 */
class TickPlanTests {

	private static final Instant NOW = Instant.parse("2026-05-05T10:15:30.250Z");

	private final Ticks everySecond = Ticks.of(RecurringSchedule.fixedRate("r", "q", Duration.ofSeconds(1)));

	private final Ticks everySecondCron = Ticks.of(RecurringSchedule.cron("r", "q", "* * * * * *"));

	@Test
	void listsFromTheNextTickToTheLookaheadBeyondTheMargin() {
		long next = NOW.plusSeconds(2).toEpochMilli() / 1000 * 1000;
		TickPlan plan = TickPlan.plan(this.everySecond, next, NOW, Duration.ofMinutes(1), 0, 2);
		assertThat(plan.dropped()).isZero();
		assertThat(plan.ticks().get(0)).isEqualTo(next);
		long futureEdge = NOW.plus(TickPlan.CLOCK_MARGIN).toEpochMilli();
		assertThat(plan.ticks().stream().filter((tick) -> tick > futureEdge)).hasSize(2);
		assertThat(plan.nextAfter()).isEqualTo(plan.ticks().get(plan.ticks().size() - 1) + 1000);
	}

	@Test
	void afterAResetStartsAMarginBeforeNowSoRedisDecidesWhatIsPast() {
		TickPlan plan = TickPlan.plan(this.everySecond, null, NOW, Duration.ofMinutes(1), 0, 2);
		assertThat(plan.ticks().get(0)).isEqualTo(NOW.minus(TickPlan.CLOCK_MARGIN).toEpochMilli() / 1000 * 1000 + 1000);
	}

	@Test
	void ticksOfAMonthLongGapAreCountedAndOnlyThoseThePolicyMayRunAreListed() {
		long monthAgo = NOW.minus(Duration.ofDays(30)).toEpochMilli() / 1000 * 1000;
		for (Ticks ticks : new Ticks[] { this.everySecond, this.everySecondCron }) {
			TickPlan plan = TickPlan.plan(ticks, monthAgo, NOW, Duration.ofSeconds(10), 3, 2);
			long oldEdge = NOW.minusSeconds(10).minus(TickPlan.CLOCK_MARGIN).toEpochMilli();
			assertThat(plan.ticks().stream().filter((tick) -> tick < oldEdge)).hasSize(3);
			assertThat(plan.ticks()).hasSizeLessThan(200).isSorted();
			long listedOld = 3;
			long expectedDropped = (oldEdge - monthAgo + 999) / 1000 - listedOld;
			if (ticks == this.everySecond) {
				assertThat(plan.dropped()).isEqualTo(expectedDropped);
			}
			else {
				// A cron schedule steps through at most a million ticks, then skips the
				// rest, counting at least one.
				assertThat(plan.dropped()).isBetween(TickPlan.MAX_STEPS - 3L, expectedDropped);
			}
		}
	}

	@Test
	void anExpressionWithoutFurtherTicksEndsThePlan() {
		Ticks never = Ticks.of(RecurringSchedule.cron("r", "q", "0 0 0 30 2 *"));
		TickPlan plan = TickPlan.plan(never, null, NOW, Duration.ofMinutes(1), 0, 2);
		assertThat(plan.ticks()).isEmpty();
		assertThat(plan.nextAfter()).isEqualTo(-1);
	}

}

package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The ticks an instance passes to {@code recur_advance}: from the schedule's next
 * uncreated tick up to a few ticks past now. Redis, not this instance's clock, decides
 * which of them are past; the plan is made from this instance's estimate of Redis's time
 * ({@link RedisTime}) and reaches a margin beyond it on both sides, and the script
 * refuses a plan whose time is further than that margin from its own. Ticks far older
 * than any misfire decision (older than now minus the threshold minus the margin) are
 * only counted, except the latest ones a misfire policy may still run, so a schedule that
 * was stopped for a month is caught up in one call.
 *
 * @param dropped old ticks counted as missed without being listed
 * @param ticks the listed ticks, ascending
 * @param nextAfter the tick after the last listed one, or -1 when the expression has no
 * further tick
 * @author delayed-tasks
 * @since 0.2.0
 */
record TickPlan(long dropped, List<Long> ticks, long nextAfter) {

	/**
	 * How far the time a plan is made from may be from the script's:
	 * {@code recur_advance} refuses a plan made further off (and replies with its time,
	 * planned from at once).
	 */
	static final Duration CLOCK_MARGIN = Duration.ofSeconds(5);

	/** The most ticks one call lists; the script asks for more when it needs them. */
	static final int MAX_TICKS = 1000;

	/** Cron ticks stepped through before an old gap is skipped without counting it. */
	static final int MAX_STEPS = 1_000_000;

	/**
	 * Plan the ticks of a call.
	 * @param ticks the schedule's ticks
	 * @param next the schedule's next uncreated tick, or {@code null} after a reset (the
	 * sequence restarts after now)
	 * @param now the estimate of Redis's time the plan is made from
	 * @param threshold the schedule's misfire threshold
	 * @param keepLate how many of the oldest ticks to keep listed so the misfire policy
	 * can run them
	 * @param lookahead future ticks to list beyond the margin
	 * @return the plan
	 */
	static TickPlan plan(Ticks ticks, @Nullable Long next, Instant now, Duration threshold, int keepLate,
			int lookahead) {
		Long t = (next != null) ? next : millis(ticks.next(now.minus(CLOCK_MARGIN)));
		long oldEdge = now.minus(threshold).minus(CLOCK_MARGIN).toEpochMilli();
		long dropped = 0;
		Deque<Long> old = new ArrayDeque<>();
		if (t != null && ticks.rateMillis() > 0 && t < oldEdge) {
			long skip = ticks.countBetween(t, oldEdge) - keepLate;
			if (skip > 0) {
				dropped += skip;
				t += skip * ticks.rateMillis();
			}
		}
		int steps = 0;
		while (t != null && t < oldEdge) {
			old.addLast(t);
			if (old.size() > keepLate) {
				old.removeFirst();
				dropped++;
			}
			t = millis(ticks.next(Instant.ofEpochMilli(t)));
			if (++steps > MAX_STEPS && t != null && t < oldEdge) {
				// Years of second ticks: the count is a lower bound from here on.
				t = millis(ticks.next(Instant.ofEpochMilli(oldEdge - 1)));
				dropped++;
			}
		}
		List<Long> listed = new ArrayList<>(old);
		long futureEdge = now.plus(CLOCK_MARGIN).toEpochMilli();
		int futures = 0;
		while (t != null && listed.size() < MAX_TICKS) {
			listed.add(t);
			long current = t;
			t = millis(ticks.next(Instant.ofEpochMilli(current)));
			if (current > futureEdge && ++futures >= lookahead) {
				break;
			}
		}
		return new TickPlan(dropped, List.copyOf(listed), (t != null) ? t : -1);
	}

	private static @Nullable Long millis(@Nullable Instant instant) {
		return (instant != null) ? instant.toEpochMilli() : null;
	}

}

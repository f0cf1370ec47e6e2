package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;

import dev.delayedtasks.RecurringSchedule;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.support.CronExpression;

/**
 * The ticks of a schedule: the instants a cron expression matches in its zone (Spring's
 * {@link CronExpression}, so a time skipped by a spring-forward transition does not fire
 * that day, and a time repeated by a fall-back transition fires at both instants), or the
 * whole multiples of a fixed rate since the epoch. Computed in Java on every instance
 * alike; Redis only decides which ticks are past.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public final class Ticks {

	/** Stored kind of a cron schedule. */
	static final String CRON = "C";

	/** Stored kind of a fixed-rate schedule. */
	static final String FIXED_RATE = "F";

	private final String kind;

	private final String expression;

	private final ZoneId zone;

	private final @Nullable CronExpression cron;

	private final long rateMillis;

	private Ticks(String kind, String expression, ZoneId zone) {
		this.kind = kind;
		this.expression = expression;
		this.zone = zone;
		if (CRON.equals(kind)) {
			this.cron = CronExpression.parse(expression);
			this.rateMillis = 0;
		}
		else if (FIXED_RATE.equals(kind)) {
			this.cron = null;
			this.rateMillis = Long.parseLong(expression);
			if (this.rateMillis < 1000) {
				throw new IllegalArgumentException("a fixed rate must be at least 1000 ms, not " + expression);
			}
		}
		else {
			throw new IllegalArgumentException("unknown schedule kind '" + kind + "'");
		}
	}

	/**
	 * The ticks of a schedule definition.
	 * @param schedule the schedule
	 * @return its ticks
	 */
	public static Ticks of(RecurringSchedule schedule) {
		Duration rate = schedule.fixedRate();
		return (rate != null) ? new Ticks(FIXED_RATE, Long.toString(rate.toMillis()), schedule.zone())
				: new Ticks(CRON, schedule.cron(), schedule.zone());
	}

	/**
	 * The ticks of a schedule as stored in Redis.
	 * @param kind {@code C} or {@code F}
	 * @param expression the cron expression, or the rate in milliseconds
	 * @param zone the zone id
	 * @return its ticks
	 * @throws IllegalArgumentException if the stored definition is not valid
	 */
	static Ticks stored(String kind, String expression, String zone) {
		return new Ticks(kind, expression, ZoneId.of(zone));
	}

	/**
	 * The first tick strictly after an instant.
	 * @param after the instant
	 * @return the tick, or {@code null} when the expression never matches again
	 */
	public @Nullable Instant next(Instant after) {
		if (this.cron == null) {
			long ms = after.toEpochMilli();
			return Instant.ofEpochMilli(Math.floorDiv(ms, this.rateMillis) * this.rateMillis + this.rateMillis);
		}
		ZonedDateTime next = this.cron.next(after.atZone(this.zone));
		return (next != null) ? next.toInstant() : null;
	}

	/**
	 * How many ticks lie in {@code [from, to)} when that is cheap to know (a fixed rate),
	 * or {@code -1}.
	 * @param from the first tick
	 * @param to the end, exclusive
	 * @return the count, or -1
	 */
	long countBetween(long from, long to) {
		if (this.cron != null || to <= from) {
			return (to <= from) ? 0 : -1;
		}
		return (to - from + this.rateMillis - 1) / this.rateMillis;
	}

	/**
	 * The rate, or zero for a cron schedule.
	 * @return the rate in milliseconds
	 */
	long rateMillis() {
		return this.rateMillis;
	}

	String kind() {
		return this.kind;
	}

	String expression() {
		return this.expression;
	}

	ZoneId zone() {
		return this.zone;
	}

	/**
	 * What a person reads: the cron expression, or {@code every PT5M}.
	 * @return the description
	 */
	String describe() {
		return (this.cron != null) ? this.expression : "every " + Duration.ofMillis(this.rateMillis);
	}

}

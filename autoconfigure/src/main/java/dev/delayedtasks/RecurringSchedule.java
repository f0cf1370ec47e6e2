package dev.delayedtasks;

import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;

import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.support.CronExpression;

/**
 * The definition of a recurring schedule: its id, its queue, when it ticks (a Spring
 * {@link CronExpression} read in a zone, or a fixed rate), the payload of its
 * occurrences, and its misfire and overlap policies. Each tick becomes one task of the
 * queue, with the id {@code <schedule id>:<tick in epoch ms>}, due at the tick.
 * <p>
 * A fixed rate ticks at whole multiples of the rate since the Unix epoch (every
 * {@code 5m}: at :00, :05, :10 ...), so every instance computes the same ticks. Cron
 * expressions have six fields (seconds first) or a macro such as {@code @daily}; zones
 * and daylight-saving transitions are handled as Spring's {@code @Scheduled} handles
 * them. <pre class="code">
 * recurringTasks.upsert(RecurringSchedule.cron("nightly-report", "reports", "0 0 2 * * *")
 *     .zone(ZoneId.of("Europe/Paris"))
 *     .misfire(MisfirePolicy.RUN_ONCE));
 * </pre>
 *
 * @param id the schedule id: 1-40 letters, digits, '.', '-', '_'
 * @param queue the queue its occurrences go to
 * @param cron the cron expression, or {@code null} for a fixed rate
 * @param fixedRate the rate, at least one second, or {@code null} for a cron expression
 * @param zone the zone the cron expression is read in (UTC by default)
 * @param payload the payload of every occurrence, or {@code null}
 * @param misfire what to do with missed ticks
 * @param misfireBound how many missed ticks {@link MisfirePolicy#RUN_ALL} runs at most
 * @param misfireThreshold how late a tick's occurrence may start before the tick counts
 * as missed (1 minute by default; keep it above the queue's usual lateness and timer
 * takeover time)
 * @param overlap what to do with a tick while the previous occurrence runs
 * @author delayed-tasks
 * @since 0.2.0
 */
public record RecurringSchedule(String id, String queue, @Nullable String cron, @Nullable Duration fixedRate,
		ZoneId zone, @Nullable Object payload, MisfirePolicy misfire, int misfireBound, Duration misfireThreshold,
		OverlapPolicy overlap) {

	/** The longest schedule id: the occurrence id adds a colon and 13 digits. */
	public static final int MAX_ID_LENGTH = 40;

	/** The largest {@link #misfireBound()}. */
	public static final int MAX_MISFIRE_BOUND = 100;

	/** The default {@link #misfireThreshold()}. */
	public static final Duration DEFAULT_MISFIRE_THRESHOLD = Duration.ofMinutes(1);

	/**
	 * Check the definition.
	 * @param id the schedule id: 1-40 letters, digits, '.', '-', '_'
	 * @param queue the queue its occurrences go to
	 * @param cron the cron expression, or {@code null} for a fixed rate
	 * @param fixedRate the rate, at least one second, or {@code null} for a cron
	 * expression
	 * @param zone the zone the cron expression is read in (UTC by default)
	 * @param payload the payload of every occurrence, or {@code null}
	 * @param misfire what to do with missed ticks
	 * @param misfireBound how many missed ticks {@link MisfirePolicy#RUN_ALL} runs at
	 * most
	 * @param misfireThreshold how late a tick's occurrence may start before the tick
	 * counts as missed (1 minute by default; keep it above the queue's usual lateness and
	 * timer takeover time)
	 * @param overlap what to do with a tick while the previous occurrence runs
	 * @throws InvalidTaskRequestException naming the schedule and the problem
	 */
	public RecurringSchedule {
		checkId(id);
		String where = "Recurring schedule '" + id + "': ";
		try {
			Names.checkQueue(queue);
		}
		catch (InvalidTaskRequestException ex) {
			throw new InvalidTaskRequestException(where + ex.getMessage());
		}
		if ((cron == null) == (fixedRate == null)) {
			throw new InvalidTaskRequestException(where + "set exactly one of cron and fixed rate");
		}
		if (cron != null) {
			checkCron(where, cron);
		}
		if (fixedRate != null && fixedRate.compareTo(Duration.ofSeconds(1)) < 0) {
			throw new InvalidTaskRequestException(
					where + "fixed rate " + fixedRate + " is too short: it must be at least 1 second");
		}
		if (zone == null || misfire == null || overlap == null || misfireThreshold == null) {
			throw new InvalidTaskRequestException(where + "zone, misfire, overlap and misfire threshold are required");
		}
		if (misfireBound < 1 || misfireBound > MAX_MISFIRE_BOUND) {
			throw new InvalidTaskRequestException(
					where + "misfire bound " + misfireBound + " must be between 1 and " + MAX_MISFIRE_BOUND);
		}
		if (misfireThreshold.compareTo(Duration.ofSeconds(1)) < 0) {
			throw new InvalidTaskRequestException(
					where + "misfire threshold " + misfireThreshold + " must be at least 1 second");
		}
	}

	/**
	 * A schedule that ticks on a cron expression, in UTC until {@link #zone(ZoneId)}.
	 * @param id the schedule id
	 * @param queue the queue
	 * @param cron a Spring cron expression (six fields, or a macro such as
	 * {@code @hourly})
	 * @return the schedule
	 * @throws InvalidTaskRequestException if the id, queue or expression is invalid
	 */
	public static RecurringSchedule cron(String id, String queue, String cron) {
		return new RecurringSchedule(id, queue, cron, null, ZoneOffset.UTC, null, MisfirePolicy.SKIP, 1,
				DEFAULT_MISFIRE_THRESHOLD, OverlapPolicy.ALLOW);
	}

	/**
	 * A schedule that ticks at a fixed rate, at whole multiples of the rate since the
	 * epoch.
	 * @param id the schedule id
	 * @param queue the queue
	 * @param rate the rate, at least one second
	 * @return the schedule
	 * @throws InvalidTaskRequestException if the id, queue or rate is invalid
	 */
	public static RecurringSchedule fixedRate(String id, String queue, Duration rate) {
		return new RecurringSchedule(id, queue, null, rate, ZoneOffset.UTC, null, MisfirePolicy.SKIP, 1,
				DEFAULT_MISFIRE_THRESHOLD, OverlapPolicy.ALLOW);
	}

	/**
	 * This schedule read in another zone.
	 * @param zone the zone
	 * @return a copy
	 */
	public RecurringSchedule zone(ZoneId zone) {
		return new RecurringSchedule(this.id, this.queue, this.cron, this.fixedRate, zone, this.payload, this.misfire,
				this.misfireBound, this.misfireThreshold, this.overlap);
	}

	/**
	 * This schedule with a payload for its occurrences.
	 * @param payload the payload, converted to the handler's type like any task's
	 * @return a copy
	 */
	public RecurringSchedule payload(@Nullable Object payload) {
		return new RecurringSchedule(this.id, this.queue, this.cron, this.fixedRate, this.zone, payload, this.misfire,
				this.misfireBound, this.misfireThreshold, this.overlap);
	}

	/**
	 * This schedule with another misfire policy ({@link MisfirePolicy#RUN_ALL} runs one
	 * missed tick unless {@link #misfire(MisfirePolicy, int)} sets a bound).
	 * @param misfire the policy
	 * @return a copy
	 */
	public RecurringSchedule misfire(MisfirePolicy misfire) {
		return misfire(misfire, this.misfireBound);
	}

	/**
	 * This schedule with another misfire policy and bound.
	 * @param misfire the policy
	 * @param bound how many missed ticks {@link MisfirePolicy#RUN_ALL} runs at most
	 * @return a copy
	 */
	public RecurringSchedule misfire(MisfirePolicy misfire, int bound) {
		return new RecurringSchedule(this.id, this.queue, this.cron, this.fixedRate, this.zone, this.payload, misfire,
				bound, this.misfireThreshold, this.overlap);
	}

	/**
	 * This schedule with another misfire threshold.
	 * @param threshold how late an occurrence may start before its tick counts as missed
	 * @return a copy
	 */
	public RecurringSchedule misfireThreshold(Duration threshold) {
		return new RecurringSchedule(this.id, this.queue, this.cron, this.fixedRate, this.zone, this.payload,
				this.misfire, this.misfireBound, threshold, this.overlap);
	}

	/**
	 * This schedule with another overlap policy.
	 * @param overlap the policy
	 * @return a copy
	 */
	public RecurringSchedule overlap(OverlapPolicy overlap) {
		return new RecurringSchedule(this.id, this.queue, this.cron, this.fixedRate, this.zone, this.payload,
				this.misfire, this.misfireBound, this.misfireThreshold, overlap);
	}

	/**
	 * Check a schedule id.
	 * @param id the id
	 * @return the id
	 * @throws InvalidTaskRequestException if it is invalid
	 */
	public static String checkId(String id) {
		if (id == null || id.isEmpty() || id.length() > MAX_ID_LENGTH) {
			throw new InvalidTaskRequestException("Recurring schedule id '" + id + "' is invalid: use 1-"
					+ MAX_ID_LENGTH + " letters, digits, '.', '-', '_'");
		}
		try {
			Names.checkQueue(id);
		}
		catch (InvalidTaskRequestException ex) {
			throw new InvalidTaskRequestException("Recurring schedule id '" + id + "' is invalid: use 1-"
					+ MAX_ID_LENGTH + " letters, digits, '.', '-', '_'");
		}
		return id;
	}

	private static void checkCron(String where, String cron) {
		try {
			CronExpression.parse(cron);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidTaskRequestException(where + "cron expression '" + cron + "' is invalid: "
					+ ex.getMessage()
					+ " (six fields: second minute hour day-of-month month day-of-week, or a macro such as @daily)");
		}
	}

}

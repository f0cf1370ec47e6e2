package dev.delayedtasks.internal.recurring;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Locale;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.MisfirePolicy;
import dev.delayedtasks.OverlapPolicy;
import dev.delayedtasks.RecurringSchedule;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.StringUtils;

/**
 * A recurring schedule declared as text (by {@code @Recurring} or in
 * {@code delayed-tasks.recurring.<id>.*}), turned into a {@link RecurringSchedule}. Every
 * problem is reported with where the schedule was declared and what to fix.
 *
 * @param where where it was declared, for messages, such as
 * {@code @Recurring on reports#nightly}
 * @param id the schedule id
 * @param queue the queue, or empty in properties that override an annotated schedule
 * @param cron the cron expression, or empty
 * @param fixedRate the rate, or empty
 * @param zone the zone id, or empty for UTC
 * @param payload the payload JSON, or empty
 * @param misfire the misfire policy name, or empty
 * @param misfireBound the bound, or empty
 * @param misfireThreshold the threshold, or empty
 * @param overlap the overlap policy name, or empty
 * @author delayed-tasks
 * @since 0.2.0
 */
public record ScheduleDeclaration(String where, String id, @Nullable String queue, @Nullable String cron,
		@Nullable String fixedRate, @Nullable String zone, @Nullable String payload, @Nullable String misfire,
		@Nullable String misfireBound, @Nullable String misfireThreshold, @Nullable String overlap) {

	/**
	 * The schedule this declares.
	 * @return the schedule
	 * @throws IllegalArgumentException naming the declaration, the schedule and the
	 * problem
	 */
	public RecurringSchedule toSchedule() {
		String prefix = this.where + ": ";
		try {
			RecurringSchedule.checkId(this.id);
			String said = "Recurring schedule '" + this.id + "': ";
			RecurringSchedule schedule;
			if (!StringUtils.hasText(this.queue)) {
				throw new InvalidTaskRequestException(said + "the queue is missing: name the queue the schedule's "
						+ "occurrences go to (properties may leave it out only to override fields of a @Recurring "
						+ "schedule with the same id)");
			}
			if (StringUtils.hasText(this.cron) == StringUtils.hasText(this.fixedRate)) {
				throw new InvalidTaskRequestException(said + "set exactly one of cron and fixed-rate");
			}
			if (StringUtils.hasText(this.cron)) {
				schedule = RecurringSchedule.cron(this.id, this.queue, this.cron.trim());
			}
			else {
				schedule = RecurringSchedule.fixedRate(this.id, this.queue,
						duration(said, "fixed rate", this.fixedRate));
			}
			if (StringUtils.hasText(this.zone)) {
				schedule = schedule.zone(zone(said, this.zone.trim()));
			}
			if (StringUtils.hasText(this.payload)) {
				schedule = schedule.payload(json(said, this.payload));
			}
			int bound = StringUtils.hasText(this.misfireBound) ? integer(said, this.misfireBound) : 1;
			if (StringUtils.hasText(this.misfire)) {
				schedule = schedule.misfire(policy(said, "misfire", this.misfire, MisfirePolicy.class), bound);
			}
			else if (StringUtils.hasText(this.misfireBound)) {
				schedule = schedule.misfire(MisfirePolicy.SKIP, bound);
			}
			if (StringUtils.hasText(this.misfireThreshold)) {
				schedule = schedule.misfireThreshold(duration(said, "misfire threshold", this.misfireThreshold));
			}
			if (StringUtils.hasText(this.overlap)) {
				schedule = schedule.overlap(policy(said, "overlap", this.overlap, OverlapPolicy.class));
			}
			return schedule;
		}
		catch (InvalidTaskRequestException ex) {
			throw new IllegalArgumentException(prefix + ex.getMessage());
		}
	}

	/**
	 * This declaration's fields over those of another declaration of the same schedule:
	 * each field this one sets wins, the others come from the other one. Cron and fixed
	 * rate go together: setting either replaces the other's timing. The queue is the
	 * other's (an annotated handler's): naming another one is an error.
	 * @param base the declaration overridden, such as a {@code @Recurring} annotation's
	 * @return the merged declaration, whose messages name both
	 * @throws IllegalArgumentException if this declaration names another queue
	 */
	public ScheduleDeclaration over(ScheduleDeclaration base) {
		String where = this.where + " over " + base.where;
		if (StringUtils.hasText(this.queue) && !this.queue.trim().equals(base.queue)) {
			throw new IllegalArgumentException(where + ": Recurring schedule '" + this.id + "': the queue '"
					+ this.queue.trim() + "' is not the annotated handler's queue '" + base.queue
					+ "': leave the queue out of the properties, or declare the schedule under another id");
		}
		boolean timing = StringUtils.hasText(this.cron) || StringUtils.hasText(this.fixedRate);
		return new ScheduleDeclaration(where, this.id, base.queue, timing ? this.cron : base.cron,
				timing ? this.fixedRate : base.fixedRate, either(this.zone, base.zone),
				either(this.payload, base.payload), either(this.misfire, base.misfire),
				either(this.misfireBound, base.misfireBound), either(this.misfireThreshold, base.misfireThreshold),
				either(this.overlap, base.overlap));
	}

	private static @Nullable String either(@Nullable String value, @Nullable String fallback) {
		return StringUtils.hasText(value) ? value : fallback;
	}

	private static Duration duration(String said, String what, String value) {
		try {
			return DurationStyle.detectAndParse(value.trim());
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidTaskRequestException(
					said + what + " '" + value + "' is not a duration: use for example 30s, 5m or PT5M");
		}
	}

	private static ZoneId zone(String said, String value) {
		try {
			return ZoneId.of(value);
		}
		catch (DateTimeException ex) {
			throw new InvalidTaskRequestException(
					said + "zone '" + value + "' is not a zone id: use for example UTC or Europe/Paris");
		}
	}

	private static Object json(String said, String value) {
		try {
			return JsonMapper.shared().readTree(value);
		}
		catch (JacksonException ex) {
			throw new InvalidTaskRequestException(
					said + "payload is not valid JSON (" + ex.getOriginalMessage() + "): " + value);
		}
	}

	private static int integer(String said, String value) {
		try {
			return Integer.parseInt(value.trim());
		}
		catch (NumberFormatException ex) {
			throw new InvalidTaskRequestException(said + "misfire bound '" + value + "' is not a whole number");
		}
	}

	private static <E extends Enum<E>> E policy(String said, String what, String value, Class<E> type) {
		String name = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
		for (E constant : type.getEnumConstants()) {
			if (constant.name().equals(name)) {
				return constant;
			}
		}
		StringBuilder names = new StringBuilder();
		for (E constant : type.getEnumConstants()) {
			names.append((names.length() > 0) ? ", " : "").append(constant.name());
		}
		throw new InvalidTaskRequestException(said + what + " '" + value + "' is not one of " + names);
	}

}

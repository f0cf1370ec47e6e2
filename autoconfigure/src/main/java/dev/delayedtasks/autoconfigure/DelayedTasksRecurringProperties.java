package dev.delayedtasks.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.delayedtasks.MisfirePolicy;
import dev.delayedtasks.OverlapPolicy;
import dev.delayedtasks.internal.recurring.ScheduleDeclaration;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.StringUtils;

/**
 * Recurring schedules declared in configuration, under
 * {@code delayed-tasks.recurring.<id>}. Each is checked while the properties are bound:
 * an invalid cron expression, zone, rate or payload fails startup with a message naming
 * the property and the problem.
 *
 * @param recurring Recurring schedules, by schedule id: queue, cron or fixed-rate, zone,
 * payload (JSON), enabled, misfire, misfire-bound, misfire-threshold, overlap.
 * @author delayed-tasks
 * @since 0.2.0
 */
@ConfigurationProperties("delayed-tasks")
public record DelayedTasksRecurringProperties(@Nullable Map<String, Schedule> recurring) {

	/**
	 * Check every schedule.
	 * @param recurring Recurring schedules, by schedule id: queue, cron or fixed-rate,
	 * zone, payload (JSON), enabled, misfire, misfire-bound, misfire-threshold, overlap.
	 * @throws IllegalArgumentException naming the property and the problem
	 */
	public DelayedTasksRecurringProperties {
		if (recurring != null) {
			recurring.forEach((id, schedule) -> {
				// A schedule without a queue overrides fields of an annotated one: it is
				// checked once merged, at startup.
				if (schedule.enabled() && StringUtils.hasText(schedule.queue())) {
					schedule.declaration(id).toSchedule();
				}
			});
		}
	}

	/**
	 * The enabled schedules, as declared: whole, or overriding fields of an annotated
	 * schedule with the same id.
	 * @return the declarations
	 */
	List<ScheduleDeclaration> declared() {
		List<ScheduleDeclaration> declared = new ArrayList<>();
		if (this.recurring != null) {
			this.recurring.forEach((id, schedule) -> {
				if (schedule.enabled()) {
					declared.add(schedule.declaration(id));
				}
			});
		}
		return declared;
	}

	/**
	 * The ids of the schedules whose {@code enabled} is false.
	 * @return the ids
	 */
	Set<String> disabled() {
		Set<String> disabled = new LinkedHashSet<>();
		if (this.recurring != null) {
			this.recurring.forEach((id, schedule) -> {
				if (!schedule.enabled()) {
					disabled.add(id);
				}
			});
		}
		return disabled;
	}

	/**
	 * One recurring schedule.
	 *
	 * @param queue Queue the schedule's occurrences go to. May be left out to override
	 * only some fields of a &#64;Recurring schedule with the same id.
	 * @param cron Spring cron expression (six fields, seconds first, or a macro such as
	 * &#64;daily). Exactly one of cron and fixed-rate (either replaces an annotation's).
	 * @param fixedRate Rate of the schedule, at least one second; ticks at whole
	 * multiples of the rate since the epoch.
	 * @param zone Zone the cron expression is read in, such as Europe/Paris. UTC when
	 * unset.
	 * @param payload Payload of every occurrence, as JSON.
	 * @param enabled Whether the schedule exists. Setting it to false removes the
	 * schedule from Redis at startup.
	 * @param misfire What to do with ticks missed while no instance ran or Redis was
	 * down.
	 * @param misfireBound Most missed ticks that run-all runs.
	 * @param misfireThreshold How late an occurrence may start before its tick counts as
	 * missed.
	 * @param overlap What to do with a tick while the previous occurrence still runs.
	 */
	public record Schedule(@Nullable String queue, @Nullable String cron, @Nullable Duration fixedRate,
			@Nullable String zone, @Nullable String payload, @DefaultValue("true") boolean enabled,
			@Nullable MisfirePolicy misfire, @Nullable Integer misfireBound, @Nullable Duration misfireThreshold,
			@Nullable OverlapPolicy overlap) {

		ScheduleDeclaration declaration(String id) {
			return new ScheduleDeclaration("delayed-tasks.recurring." + id, id, this.queue, this.cron,
					(this.fixedRate != null) ? this.fixedRate.toString() : null, this.zone, this.payload,
					(this.misfire != null) ? this.misfire.name() : null,
					(this.misfireBound != null) ? this.misfireBound.toString() : null,
					(this.misfireThreshold != null) ? this.misfireThreshold.toString() : null,
					(this.overlap != null) ? this.overlap.name() : null);
		}

	}

}

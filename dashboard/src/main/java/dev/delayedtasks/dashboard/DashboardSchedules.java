package dev.delayedtasks.dashboard;

import java.util.Optional;

import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringSchedulePage;
import dev.delayedtasks.RecurringTasks;
import org.jspecify.annotations.Nullable;

/**
 * The recurring schedules the dashboard shows, read through {@link RecurringTasks} as the
 * {@code recurringtasks} endpoint reads them: a page at a time by id, at most
 * {@code delayed-tasks.monitoring.max-schedules} per page, one Redis call per schedule.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public class DashboardSchedules {

	private final RecurringTasks recurring;

	private final int maxSchedules;

	/**
	 * Create the reads.
	 * @param recurring the recurring schedules
	 * @param maxSchedules the most schedules on one page
	 */
	public DashboardSchedules(RecurringTasks recurring, int maxSchedules) {
		this.recurring = recurring;
		this.maxSchedules = maxSchedules;
	}

	/**
	 * One page of the schedules, by id.
	 * @param after the {@code next} of the previous page, or {@code null} for the first
	 * @param limit the most schedules on the page, capped at
	 * {@code delayed-tasks.monitoring.max-schedules}
	 * @return the page
	 */
	public RecurringSchedulePage page(@Nullable String after, int limit) {
		if (limit < 1) {
			throw new IllegalArgumentException("A page of schedules holds at least 1 schedule, not " + limit);
		}
		return this.recurring.list((after != null) ? RecurringSchedule.checkId(after) : null,
				Math.min(limit, this.maxSchedules));
	}

	/**
	 * One schedule.
	 * @param id the schedule id
	 * @return the schedule, or empty when there is none
	 */
	public Optional<RecurringScheduleInfo> schedule(String id) {
		return this.recurring.find(RecurringSchedule.checkId(id));
	}

}

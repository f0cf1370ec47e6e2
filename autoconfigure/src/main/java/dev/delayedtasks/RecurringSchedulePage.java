package dev.delayedtasks;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One page of the recurring schedules, by id.
 *
 * @param schedules the page's schedules, by id (a schedule whose data cannot be read is
 * left out and logged)
 * @param next the id to pass as {@code after} for the next page, or {@code null} on the
 * last page
 * @param total how many schedules there are
 * @author delayed-tasks
 * @since 0.2.0
 * @see RecurringTasks#list(String, int)
 */
public record RecurringSchedulePage(List<RecurringScheduleInfo> schedules, @Nullable String next, long total) {

	/**
	 * Create a page.
	 * @param schedules the page's schedules
	 * @param next the cursor of the next page, or {@code null}
	 * @param total how many schedules there are
	 */
	public RecurringSchedulePage {
		schedules = List.copyOf(schedules);
	}

}

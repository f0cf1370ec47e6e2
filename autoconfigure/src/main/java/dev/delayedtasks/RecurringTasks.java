package dev.delayedtasks;

import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * Creates, changes and inspects recurring schedules: cron or fixed-rate schedules whose
 * every tick becomes one ordinary task (an occurrence) of the schedule's queue, created
 * once whatever the number of instances. Schedules live in Redis: one created here
 * persists across restarts until it is {@linkplain #remove(String) removed}. Schedules
 * declared with {@code @Recurring} or {@code delayed-tasks.recurring.<id>.*} are upserted
 * at startup through this API.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public interface RecurringTasks {

	/**
	 * Create a schedule, or update it. A changed definition (expression, zone, rate,
	 * payload or policies) takes effect from its next tick after now: occurrences created
	 * for the old definition that have not started are skipped, and no tick is created
	 * twice. An unchanged definition changes nothing.
	 * @param schedule the schedule
	 * @return the schedule as stored
	 * @throws InvalidTaskRequestException if the schedule is invalid, or its id is taken
	 * by a schedule of another queue
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	RecurringScheduleInfo upsert(RecurringSchedule schedule);

	/**
	 * Remove a schedule. Occurrences it created that have not started are skipped when
	 * they come due.
	 * @param id the schedule id
	 * @return whether it existed
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	boolean remove(String id);

	/**
	 * Pause a schedule: no occurrence runs until it is resumed, and the ticks in between
	 * do not count as missed.
	 * @param id the schedule id
	 * @return whether it exists
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	boolean pause(String id);

	/**
	 * Resume a paused schedule from its next tick after now.
	 * @param id the schedule id
	 * @return whether it exists
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	boolean resume(String id);

	/**
	 * Run a schedule once now, outside its ticks ("trigger now"): one occurrence, an
	 * ordinary task of the schedule's queue with the id {@code <schedule id>:<Redis time
	 * in epoch milliseconds>}, ready at once. It runs like a tick's occurrence: the
	 * overlap policy applies (with {@link OverlapPolicy#SKIP} it is skipped while the
	 * previous occurrence has not finished), it becomes the last tick and its outcome the
	 * last outcome, and, like a tick, it counts as missed when no worker starts it within
	 * the misfire threshold. The schedule's ticks do not move.
	 * @param id the schedule id
	 * @return the occurrence's task id, or empty when there is no such schedule
	 * @throws IllegalStateException if the schedule is paused (its occurrences would be
	 * skipped): resume it first
	 * @throws TaskStoreException if Redis cannot be reached
	 * @since 0.3.0
	 */
	Optional<TaskId> trigger(String id);

	/**
	 * Every schedule, of every known queue. A schedule whose data cannot be read (corrupt
	 * data under its key) is left out and logged, not the whole list with it. Reads each
	 * schedule with a Redis call of its own: with many schedules, read them a page at a
	 * time with {@link #list(String, int)}.
	 * @return the schedules, by id
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	List<RecurringScheduleInfo> list();

	/**
	 * One page of the schedules, by id: at most {@code limit} of them, from the first id
	 * after {@code after}. Reads the index of schedule ids and each schedule of the page
	 * (one Redis call each); a schedule whose data cannot be read is left out and logged.
	 * @param after the {@link RecurringSchedulePage#next() next} of the previous page, or
	 * {@code null} for the first page
	 * @param limit the most schedules on the page, at least 1
	 * @return the page
	 * @throws InvalidTaskRequestException if the limit is below 1 or {@code after} is not
	 * a valid schedule id
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	RecurringSchedulePage list(@Nullable String after, int limit);

	/**
	 * One schedule.
	 * @param id the schedule id
	 * @return the schedule, or empty when there is none with that id
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	Optional<RecurringScheduleInfo> find(String id);

}

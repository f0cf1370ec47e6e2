package dev.delayedtasks.internal.recurring;

import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.RecurringSchedule;

/**
 * The recurring schedules this application declares with {@code @Recurring}, collected
 * while beans are created and upserted at startup by {@link RecurringScheduleRegistrar}.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public final class RecurringDeclarations {

	private final List<Declared> declared = new ArrayList<>();

	/**
	 * Add a schedule.
	 * @param schedule the schedule
	 * @param where where it was declared, for messages
	 * @throws IllegalStateException if another declaration has the same id
	 */
	public synchronized void add(RecurringSchedule schedule, String where) {
		for (Declared other : this.declared) {
			if (other.schedule().id().equals(schedule.id())) {
				throw new IllegalStateException("Recurring schedule '" + schedule.id() + "' is declared twice: by "
						+ other.where() + " and by " + where);
			}
		}
		this.declared.add(new Declared(schedule, where));
	}

	/**
	 * The declared schedules.
	 * @return a copy
	 */
	public synchronized List<Declared> all() {
		return List.copyOf(this.declared);
	}

	/**
	 * One declared schedule.
	 *
	 * @param schedule the schedule
	 * @param where where it was declared
	 */
	public record Declared(RecurringSchedule schedule, String where) {

	}

}

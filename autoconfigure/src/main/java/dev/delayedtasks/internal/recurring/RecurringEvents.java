package dev.delayedtasks.internal.recurring;

/**
 * What happens to recurring schedules on this instance, for metrics: occurrences it
 * created, ticks it found missed, occurrences its policies skipped. Counts are per
 * instance; summed over instances they count each event once.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public interface RecurringEvents {

	/** Events nobody listens to. */
	RecurringEvents NONE = new RecurringEvents() {
	};

	/**
	 * This instance created occurrences.
	 * @param queue the queue
	 * @param scheduleId the schedule
	 * @param count how many
	 */
	default void created(String queue, String scheduleId, long count) {
	}

	/**
	 * This instance found ticks missed (the misfire policy did not run them).
	 * @param queue the queue
	 * @param scheduleId the schedule
	 * @param count how many
	 */
	default void missed(String queue, String scheduleId, long count) {
	}

	/**
	 * An occurrence completed without running its handler.
	 * @param queue the queue
	 * @param scheduleId the schedule
	 * @param reason {@code overlap}, {@code missed} (or superseded by a changed
	 * definition, or its schedule removed) or {@code paused}
	 */
	default void skipped(String queue, String scheduleId, String reason) {
	}

}

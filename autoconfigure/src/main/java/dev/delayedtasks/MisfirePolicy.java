package dev.delayedtasks;

/**
 * What a {@link RecurringSchedule} does with ticks missed while no instance ran it, Redis
 * was down, or its occurrences waited longer than the schedule's misfire threshold.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public enum MisfirePolicy {

	/** Skip the missed ticks and carry on from the next one (the default). */
	SKIP,

	/** Run one occurrence, for the latest missed tick, in place of all of them. */
	RUN_ONCE,

	/**
	 * Run an occurrence for each missed tick, up to the schedule's misfire bound (the
	 * latest ones).
	 */
	RUN_ALL

}

package dev.delayedtasks;

/**
 * What a {@link RecurringSchedule} does when a tick comes while the occurrence of an
 * earlier tick still runs.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public enum OverlapPolicy {

	/** Run it anyway: occurrences may run at the same time (the default). */
	ALLOW,

	/** Skip the tick: its occurrence completes without running the handler. */
	SKIP

}

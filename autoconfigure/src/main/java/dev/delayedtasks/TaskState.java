package dev.delayedtasks;

/**
 * Where a task is in its life. Completed and cancelled tasks are deleted, so they are not
 * found at all.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public enum TaskState {

	/** Waiting for its due time (a new task, or a retry waiting for its back-off). */
	SCHEDULED,

	/** Due, waiting for a free worker. */
	READY,

	/** Leased to a worker that is running it. */
	ACTIVE,

	/** Failed for good; kept in the dead letters until redriven or purged. */
	DEAD,

	/**
	 * Accepted by an asynchronous call of this instance and not stored yet: waiting for
	 * the call ahead of it, or held through a Redis outage by the outage buffer. Only the
	 * instance that holds it reports it; {@code cancel} withdraws it.
	 */
	HELD

}

package dev.delayedtasks;

/**
 * Pauses and resumes queues for every instance: a paused queue's tasks are not claimed,
 * while its scheduled tasks still become ready on time and run once the queue is resumed.
 * Removes empty queues from the index of known queues. Available on every instance,
 * producer-only ones included.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface QueueControl {

	/**
	 * Stop claiming a queue's tasks, on every instance. Tasks already running finish.
	 * @param queue the queue
	 * @throws InvalidTaskRequestException if the queue name is invalid
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	void pause(String queue);

	/**
	 * Claim a queue's tasks again, on every instance, and wake idle dispatchers.
	 * @param queue the queue
	 * @throws InvalidTaskRequestException if the queue name is invalid
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	void resume(String queue);

	/**
	 * Whether a queue is paused.
	 * @param queue the queue
	 * @return whether it is paused
	 * @throws InvalidTaskRequestException if the queue name is invalid
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	boolean isPaused(String queue);

	/**
	 * Remove a queue that is no longer used from the index of known queues, which keeps
	 * every queue name ever scheduled to, and delete its leftover keys (counters, layout
	 * version, paused flag, wake-up tokens). Refused, with nothing changed, while the
	 * queue has scheduled, ready, active or dead tasks, while this instance has a handler
	 * for it, or while another instance holds its timer (a handler for it runs there). A
	 * task scheduled to the queue at the same time is never lost from view: either the
	 * removal is refused, or the queue is added to the index again by that schedule.
	 * Scheduling to the queue later simply adds it again.
	 * @param queue the queue
	 * @return whether it was removed, and if not, why
	 * @throws InvalidTaskRequestException if the queue name is invalid
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	QueueRemoval remove(String queue);

}

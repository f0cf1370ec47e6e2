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
	 * A queue's flow control in force, as every instance's claims apply it.
	 * @param queue the queue
	 * @return its limits, {@link QueueLimits#NONE} when it has none
	 * @throws InvalidTaskRequestException if the queue name is invalid
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	QueueLimits limits(String queue);

	/**
	 * Change a queue's flow control for every instance at once, and wake idle dispatchers
	 * to claim under it: claims that wait for a rate window see it within a second. The
	 * change lasts until an instance starts with a configured value
	 * ({@code delayed-tasks.queues.<queue>.rate-limit}, {@code global-concurrency})
	 * different from the one the last start wrote.
	 * @param queue the queue
	 * @param limits the new limits, {@link QueueLimits#NONE} for none
	 * @throws InvalidTaskRequestException if the queue name is invalid
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	void setLimits(String queue, QueueLimits limits);

	/**
	 * Remove a queue that is no longer used from the index of known queues, which keeps
	 * every queue name ever scheduled to, and delete its leftover keys (counters, layout
	 * version, paused flag, flow control, wake-up tokens). Refused, with nothing changed,
	 * while the queue has scheduled, ready, active or dead tasks, while this instance has
	 * a handler for it, or while another instance holds its timer (a handler for it runs
	 * there). A task scheduled to the queue at the same time is never lost from view:
	 * either the removal is refused, or the queue is added to the index again by that
	 * schedule. Scheduling to the queue later simply adds it again.
	 * @param queue the queue
	 * @return whether it was removed, and if not, why
	 * @throws InvalidTaskRequestException if the queue name is invalid
	 * @throws TaskStoreException if Redis cannot be reached
	 */
	QueueRemoval remove(String queue);

}

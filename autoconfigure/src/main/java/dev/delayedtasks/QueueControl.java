package dev.delayedtasks;

/**
 * Pauses and resumes queues for every instance: a paused queue's tasks are not claimed,
 * while its scheduled tasks still become ready on time and run once the queue is resumed.
 * Available on every instance, producer-only ones included.
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

}

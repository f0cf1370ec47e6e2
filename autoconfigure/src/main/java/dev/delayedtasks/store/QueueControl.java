package dev.delayedtasks.store;

import dev.delayedtasks.Names;

import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Pauses and resumes queues for every instance: a paused queue's tasks are not claimed,
 * while scheduled tasks still become ready and run after the queue is resumed.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class QueueControl {

	private final StringRedisTemplate redis;

	private final StoreSettings settings;

	/**
	 * Create a control.
	 * @param redis the template
	 * @param settings the settings (for the key prefix)
	 */
	public QueueControl(StringRedisTemplate redis, StoreSettings settings) {
		this.redis = redis;
		this.settings = settings;
	}

	/**
	 * Stop claiming a queue's tasks, on every instance.
	 * @param queue the queue
	 */
	public void pause(String queue) {
		this.redis.opsForHash().put(this.settings.keys(Names.checkQueue(queue)).meta(), "paused", "1");
	}

	/**
	 * Claim a queue's tasks again, and wake idle dispatchers.
	 * @param queue the queue
	 */
	public void resume(String queue) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		this.redis.opsForHash().delete(keys.meta(), "paused");
		this.redis.opsForList().rightPush(keys.wake(), "1");
	}

	/**
	 * Whether a queue is paused.
	 * @param queue the queue
	 * @return whether it is paused
	 */
	public boolean isPaused(String queue) {
		return "1".equals(this.redis.opsForHash().get(this.settings.keys(Names.checkQueue(queue)).meta(), "paused"));
	}

}

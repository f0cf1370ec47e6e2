package dev.delayedtasks.store;

import dev.delayedtasks.Names;
import dev.delayedtasks.QueueControl;

import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * {@link QueueControl} through the {@code paused} field of each queue's {@code meta}
 * hash, which the claim script reads.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisQueueControl implements QueueControl {

	private final StringRedisTemplate redis;

	private final StoreSettings settings;

	/**
	 * Create a control.
	 * @param redis the template
	 * @param settings the settings (for the key prefix)
	 */
	public RedisQueueControl(StringRedisTemplate redis, StoreSettings settings) {
		this.redis = redis;
		this.settings = settings;
	}

	@Override
	public void pause(String queue) {
		this.redis.opsForHash().put(this.settings.keys(Names.checkQueue(queue)).meta(), "paused", "1");
	}

	@Override
	public void resume(String queue) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		this.redis.opsForHash().delete(keys.meta(), "paused");
		this.redis.opsForList().rightPush(keys.wake(), "1");
	}

	@Override
	public boolean isPaused(String queue) {
		return "1".equals(this.redis.opsForHash().get(this.settings.keys(Names.checkQueue(queue)).meta(), "paused"));
	}

}

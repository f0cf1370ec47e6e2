package dev.delayedtasks.store;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.Names;

import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The index of known queues ({@code <prefix>:queues}), kept outside every partition
 * because it spans them. Each process adds a queue once, not on every schedule.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class QueueIndex {

	private final StringRedisTemplate redis;

	private final String key;

	private final Set<String> registered = ConcurrentHashMap.newKeySet();

	/**
	 * Create an index.
	 * @param redis the template
	 * @param keyPrefix the key prefix
	 */
	public QueueIndex(StringRedisTemplate redis, String keyPrefix) {
		this.redis = redis;
		this.key = keyPrefix + ":queues";
	}

	/**
	 * Record that a queue exists (once per process).
	 * @param queue the queue
	 */
	public void register(String queue) {
		if (!this.registered.contains(queue)) {
			this.redis.opsForSet().add(this.key, queue);
			this.registered.add(queue);
		}
	}

	/**
	 * Every queue any process registered. Members that are not valid queue names are left
	 * out: only {@link #register(String)} of a checked name writes this set, so such a
	 * member was written by something else, and it must neither become part of a key nor
	 * make every listing of the queues fail.
	 * @return the queues, sorted
	 */
	public Set<String> queues() {
		Set<String> members = this.redis.opsForSet().members(this.key);
		Set<String> queues = new TreeSet<>();
		if (members != null) {
			members.stream().filter(QueueIndex::isValidName).forEach(queues::add);
		}
		return queues;
	}

	private static boolean isValidName(String member) {
		try {
			Names.checkQueue(member);
			return true;
		}
		catch (InvalidTaskRequestException ex) {
			return false;
		}
	}

}

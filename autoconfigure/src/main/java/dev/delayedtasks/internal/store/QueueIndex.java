package dev.delayedtasks.internal.store;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.Names;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The index of known queues ({@code <prefix>:queues}), kept outside every partition
 * because it spans them. Each process adds a queue once, not on every schedule; the
 * enqueue script tells it when a queue's partition was new or removed since, and it adds
 * the queue again (see {@code RedisQueueControl.remove} for why that order makes removal
 * safe). Every time it sees the index grow past a threshold, it logs a warning once.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class QueueIndex {

	/**
	 * The default size above which the index is reported as too large.
	 */
	public static final int DEFAULT_WARN_THRESHOLD = 1000;

	private static final Log logger = LogFactory.getLog(QueueIndex.class);

	private final StringRedisTemplate redis;

	private final String key;

	private final int warnThreshold;

	private final Set<String> registered = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean overThreshold = new AtomicBoolean();

	/**
	 * Create an index that warns above {@link #DEFAULT_WARN_THRESHOLD} queues.
	 * @param redis the template
	 * @param keyPrefix the key prefix
	 */
	public QueueIndex(StringRedisTemplate redis, String keyPrefix) {
		this(redis, keyPrefix, DEFAULT_WARN_THRESHOLD);
	}

	/**
	 * Create an index.
	 * @param redis the template
	 * @param keyPrefix the key prefix
	 * @param warnThreshold the size above which a warning is logged
	 */
	public QueueIndex(StringRedisTemplate redis, String keyPrefix, int warnThreshold) {
		this.redis = redis;
		this.key = keyPrefix + ":queues";
		this.warnThreshold = warnThreshold;
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
	 * Whether this process registered a queue already.
	 * @param queue the queue
	 * @return whether {@link #register(String)} or {@link #registered(String)} saw it
	 */
	public boolean isRegistered(String queue) {
		return this.registered.contains(queue);
	}

	/**
	 * Record that a queue was added to the index by a non-blocking call.
	 * @param queue the queue
	 */
	public void registered(String queue) {
		this.registered.add(queue);
	}

	/**
	 * Forget that this process registered a queue, so that its next schedule registers it
	 * again: a non-blocking call is about to add it to the index once more.
	 * @param queue the queue
	 */
	public void forget(String queue) {
		this.registered.remove(queue);
	}

	/**
	 * Record that a queue exists, even if this process did so before: its partition was
	 * new or had been removed when a task was written to it.
	 * @param queue the queue
	 */
	public void registerAgain(String queue) {
		// Forgotten first: if the SADD fails, the next register() tries again.
		this.registered.remove(queue);
		this.redis.opsForSet().add(this.key, queue);
		this.registered.add(queue);
	}

	/**
	 * The key of the index.
	 * @return the key
	 */
	public String key() {
		return this.key;
	}

	/**
	 * Take a queue out of the index. Only {@code RedisQueueControl.remove} calls it,
	 * after emptying the queue's partition.
	 * @param queue the queue
	 */
	public void remove(String queue) {
		this.registered.remove(queue);
		this.redis.opsForSet().remove(this.key, queue);
	}

	/**
	 * Whether a queue is in the index: one {@code SISMEMBER}, however large the index.
	 * @param queue the queue, already validated
	 * @return whether it is known
	 */
	public boolean contains(String queue) {
		return Boolean.TRUE.equals(this.redis.opsForSet().isMember(this.key, queue));
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
		observeSize(queues.size());
		return queues;
	}

	/**
	 * Warn once when the index is seen above the threshold, and again only after it was
	 * seen at or below it: every listing reads the size for free, and the dead-letter
	 * retention lists the queues every minute on every instance.
	 * @param size the number of queues in the index
	 */
	private void observeSize(int size) {
		if (size > this.warnThreshold) {
			if (this.overThreshold.compareAndSet(false, true)) {
				logger.warn("The index of delayed-tasks queues (Redis key " + this.key + ") holds " + size
						+ " queues, more than delayed-tasks.monitoring.queue-index-warn-threshold ("
						+ this.warnThreshold
						+ "). Every queue name ever scheduled to stays in it, so names made from request data "
						+ "(user ids, tenants) make it grow without bound. Use a fixed set of queue names and put "
						+ "the varying part in the payload; remove empty queues that are no longer used with the "
						+ "delayedtasks endpoint's 'remove' action (POST /actuator/delayedtasks/{queue} "
						+ "{\"action\":\"remove\"}); metrics, health and the endpoint report at most "
						+ "delayed-tasks.monitoring.max-queues of them, handled and declared "
						+ "(delayed-tasks.queues.<name>) queues first");
			}
		}
		else if (this.overThreshold.compareAndSet(true, false)) {
			logger.info("The index of delayed-tasks queues holds " + size + " queues, no longer more than "
					+ this.warnThreshold);
		}
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

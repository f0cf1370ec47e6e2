package dev.delayedtasks.store;

import dev.delayedtasks.DelayedTaskException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The version of the Redis data layout this library writes, stored in each partition's
 * {@code meta} hash. A library that finds another version refuses to touch the queue
 * rather than misread it.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class LayoutVersion {

	/** The layout this library writes and reads. */
	public static final String CURRENT = "1";

	private static final Log logger = LogFactory.getLog(LayoutVersion.class);

	private final StringRedisTemplate redis;

	private final StoreSettings settings;

	private final QueueIndex queues;

	/**
	 * Create a checker.
	 * @param redis the template
	 * @param settings the settings (for the key prefix)
	 * @param queues the queue index
	 */
	public LayoutVersion(StringRedisTemplate redis, StoreSettings settings, QueueIndex queues) {
		this.redis = redis;
		this.settings = settings;
		this.queues = queues;
	}

	/**
	 * Check every known queue's layout version.
	 * @throws DelayedTaskException naming the queue, both versions and what to do, on a
	 * mismatch; or naming the missing permission when Redis's ACL refuses the read
	 */
	public void verify() {
		try {
			for (String queue : this.queues.queues()) {
				Object stored = this.redis.opsForHash().get(this.settings.keys(queue).meta(), "v");
				if (stored != null && !CURRENT.equals(stored.toString())) {
					throw mismatch(queue, stored.toString());
				}
			}
		}
		catch (DataAccessException ex) {
			if (AclDenial.isDenial(ex)) {
				// Unlike an outage, a missing permission does not heal by itself: every
				// schedule and claim would fail, so say so now, once.
				throw new DelayedTaskException("delayed-tasks cannot read its data under key prefix '"
						+ this.settings.keyPrefix() + "' in Redis: " + StoreScripts.reason(ex), ex);
			}
			// The enqueue script checks the version on every write too, so an unreachable
			// Redis need not stop startup.
			logger.warn(
					"Could not verify the delayed-tasks data layout, Redis did not answer: " + StoreScripts.reason(ex));
		}
	}

	static DelayedTaskException mismatch(String queue, String stored) {
		return new DelayedTaskException("Queue '" + queue + "' in Redis has data layout version " + stored
				+ ", but this version of delayed-tasks reads and writes layout " + CURRENT
				+ ": run the delayed-tasks version that wrote it until the queue is drained, or use a new "
				+ "delayed-tasks.key-prefix for this version");
	}

}

package dev.delayedtasks.internal.store;

import java.util.List;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.internal.store.script.AclDenial;
import dev.delayedtasks.internal.store.script.StoreScripts;
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

	/**
	 * The field of a partition's {@code meta} hash that holds a test clock offset in
	 * milliseconds: the scripts add it to Redis {@code TIME} (the {@code now} include).
	 * Only delayed-tasks-test writes it; an application that finds it refuses to start.
	 */
	public static final String TEST_CLOCK_FIELD = "o";

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
	 * Check every known queue's layout version, and that no queue runs on a test clock.
	 * @throws DelayedTaskException naming the queue, both versions and what to do, on a
	 * mismatch; naming the queue, the offset and how to remove it, when a test moved the
	 * queue's clock; or naming the missing permission when Redis's ACL refuses the read
	 */
	public void verify() {
		try {
			for (String queue : this.queues.queues()) {
				List<Object> fields = this.redis.opsForHash()
					.multiGet(this.settings.keys(queue).meta(), List.of("v", TEST_CLOCK_FIELD));
				Object stored = fields.get(0);
				if (stored != null && !CURRENT.equals(stored.toString())) {
					throw mismatch(queue, stored.toString());
				}
				Object offset = fields.get(1);
				if (offset != null) {
					throw testClock(queue, this.settings.keys(queue).meta(), offset.toString());
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

	static DelayedTaskException testClock(String queue, String metaKey, String offset) {
		// Loud on purpose: on a shifted clock, every task of the queue would run early.
		return new DelayedTaskException("Queue '" + queue + "' in Redis runs on a test clock moved " + offset
				+ " ms ahead (field '" + TEST_CLOCK_FIELD + "' of " + metaKey
				+ ", written by delayed-tasks-test's DelayedTasksTester#advanceTime), so its tasks would run early: "
				+ "an application refuses to start on it. Point tests at their own key prefix or Redis, and remove "
				+ "the offset with HDEL " + metaKey + " " + TEST_CLOCK_FIELD);
	}

	static DelayedTaskException mismatch(String queue, String stored) {
		return new DelayedTaskException("Queue '" + queue + "' in Redis has data layout version " + stored
				+ ", but this version of delayed-tasks reads and writes layout " + CURRENT
				+ ": run the delayed-tasks version that wrote it until the queue is drained, or use a new "
				+ "delayed-tasks.key-prefix for this version");
	}

}

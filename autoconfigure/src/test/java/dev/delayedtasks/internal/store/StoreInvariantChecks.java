package dev.delayedtasks.internal.store;

import java.util.List;

import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Opens {@link StoreInvariants} to tests in other packages (the worker's integration
 * tests check that a partition is consistent after crashes, shutdowns and races).
 */
public final class StoreInvariantChecks {

	private StoreInvariantChecks() {
	}

	/**
	 * Every violated invariant of one queue partition.
	 * @param redis a template on the test Redis
	 * @param keyPrefix the key prefix
	 * @param queue the queue
	 * @return the violations, empty when the partition is consistent
	 */
	public static List<String> violations(StringRedisTemplate redis, String keyPrefix, String queue) {
		return StoreInvariants.violations(redis, PartitionKeys.of(keyPrefix, queue));
	}

}

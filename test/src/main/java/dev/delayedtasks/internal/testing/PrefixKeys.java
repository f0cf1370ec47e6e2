package dev.delayedtasks.internal.testing;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

/**
 * Internal: deletes the keys under a test context's key prefix, on a standalone server or
 * on every master of a Redis Cluster, through the context's own connection factory.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class PrefixKeys {

	private final RedisConnectionFactory connectionFactory;

	private final String prefix;

	/**
	 * Create a cleaner for one prefix.
	 * @param connectionFactory the context's connection factory
	 * @param prefix the key prefix ({@code delayed-tasks.key-prefix}); it holds no glob
	 * characters (the property's rule)
	 */
	public PrefixKeys(RedisConnectionFactory connectionFactory, String prefix) {
		this.connectionFactory = connectionFactory;
		this.prefix = prefix;
	}

	/**
	 * Delete every key under the prefix, the queue index too: when the test context
	 * closes.
	 */
	public void deleteAll() {
		delete(false);
	}

	/**
	 * Delete every key under the prefix.
	 * @param keepQueueIndex whether to keep the index of queue names
	 * ({@code <prefix>:queues}), which the application caches as written
	 * @return how many keys were deleted
	 */
	public long delete(boolean keepQueueIndex) {
		byte[] index = (this.prefix + ":queues").getBytes(StandardCharsets.UTF_8);
		List<byte[]> keys = new ArrayList<>();
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			ScanOptions match = ScanOptions.scanOptions().match(this.prefix + ":*").count(1000).build();
			if (connection instanceof RedisClusterConnection cluster) {
				for (RedisClusterNode node : cluster.clusterGetNodes()) {
					if (node.isMaster() && node.isConnected()) {
						keys.addAll(cluster.keys(node, match.getPattern().getBytes(StandardCharsets.UTF_8)));
					}
				}
			}
			else {
				try (Cursor<byte[]> cursor = connection.keyCommands().scan(match)) {
					cursor.forEachRemaining(keys::add);
				}
			}
			long deleted = 0;
			for (byte[] key : keys) {
				if (keepQueueIndex && Arrays.equals(key, index)) {
					continue;
				}
				// One key per call: a cluster refuses keys of several slots in one
				// command.
				Long count = connection.keyCommands().del(key);
				deleted += (count != null) ? count : 0;
			}
			return deleted;
		}
	}

}

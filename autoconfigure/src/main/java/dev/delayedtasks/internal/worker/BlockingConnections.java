package dev.delayedtasks.internal.worker;

import java.time.Duration;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.StringCodec;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Opens the dedicated connections dispatchers and timers block on, from the application's
 * own Lettuce client, so TLS, ACL, Sentinel and Cluster settings carry over. They stay
 * outside Spring's connection pool and have their own command timeout, longer than the
 * block, so a popped token is never discarded by a client-side timeout.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class BlockingConnections {

	private final LettuceConnectionFactory connectionFactory;

	/**
	 * Use the application's connection factory.
	 * @param connectionFactory the factory; must be a {@link LettuceConnectionFactory}
	 * @throws IllegalStateException if it is not
	 */
	public BlockingConnections(RedisConnectionFactory connectionFactory) {
		if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
			throw new IllegalStateException("delayed-tasks workers need Lettuce, but the RedisConnectionFactory is a "
					+ connectionFactory.getClass().getName()
					+ ": use spring-boot-starter-data-redis's default client, or set delayed-tasks.worker.enabled=false "
					+ "for a producer-only application");
		}
		this.connectionFactory = lettuce;
	}

	/**
	 * Open a connection for blocking reads.
	 * @param block the longest block; the command timeout is one second longer
	 * @return the connection
	 */
	public BlockingConnection open(Duration block) {
		AbstractRedisClient client = this.connectionFactory.getRequiredNativeClient();
		Duration timeout = block.plusSeconds(1);
		if (client instanceof RedisClusterClient cluster) {
			StatefulRedisClusterConnection<String, String> connection = cluster.connect(StringCodec.UTF8);
			connection.setTimeout(timeout);
			return new BlockingConnection(connection, (seconds, keys) -> connection.sync().blpop(seconds, keys));
		}
		StatefulRedisConnection<String, String> connection = ((RedisClient) client).connect(StringCodec.UTF8);
		connection.setTimeout(timeout);
		return new BlockingConnection(connection, (seconds, keys) -> connection.sync().blpop(seconds, keys));
	}

	/**
	 * A connection that pops from lists, blocking up to a timeout.
	 */
	public static final class BlockingConnection implements AutoCloseable {

		private final StatefulConnection<String, String> connection;

		private final Pop pop;

		BlockingConnection(StatefulConnection<String, String> connection, Pop pop) {
			this.connection = connection;
			this.pop = pop;
		}

		/**
		 * {@code BLPOP} the first of {@code keys} that has an element (all keys must
		 * share a hash tag).
		 * @param block the longest wait
		 * @param keys the lists
		 * @return the popped element, or {@code null} when the wait ended empty
		 */
		public @Nullable String pop(Duration block, String... keys) {
			KeyValue<String, String> popped = this.pop.blpop(block.toMillis() / 1000.0, keys);
			return (popped != null && popped.hasValue()) ? popped.getValue() : null;
		}

		@Override
		public void close() {
			this.connection.closeAsync();
		}

	}

	@FunctionalInterface
	interface Pop {

		@Nullable KeyValue<String, String> blpop(double seconds, String... keys);

	}

}

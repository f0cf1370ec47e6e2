package dev.delayedtasks.test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.SslOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import org.jspecify.annotations.Nullable;

/**
 * Short administrative conversations with a Redis server: its name and version, and
 * deleting a test's keys.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class RedisInfo {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private RedisInfo() {
	}

	static ServerVersion version(RedisURI uri, @Nullable Path caCertificate) {
		try (Session session = new Session(uri, caCertificate)) {
			return ServerVersion.parse(session.commands().info("server"));
		}
	}

	static long deleteKeys(List<RedisURI> nodes, @Nullable Path caCertificate, String prefix) {
		long deleted = 0;
		for (RedisURI node : nodes) {
			deleted += deleteKeys(node, caCertificate, prefix);
		}
		return deleted;
	}

	static long deleteKeys(RedisURI uri, @Nullable Path caCertificate, String prefix) {
		try (Session session = new Session(uri, caCertificate)) {
			RedisCommands<String, String> commands = session.commands();
			if (commands.info("replication").contains("role:slave")) {
				// A replica refuses writes; its master's scan covers the same keys.
				return 0;
			}
			long deleted = 0;
			ScanCursor cursor = ScanCursor.INITIAL;
			ScanArgs match = ScanArgs.Builder.matches(escapeGlob(prefix) + "*").limit(1000);
			do {
				KeyScanCursor<String> page = commands.scan(cursor, match);
				List<String> keys = page.getKeys();
				// One UNLINK per hash slot: a cluster node refuses keys of several slots
				// in one command (CROSSSLOT).
				Map<Integer, List<String>> bySlot = keys.stream().collect(Collectors.groupingBy(SlotHash::getSlot));
				for (List<String> slotKeys : bySlot.values()) {
					deleted += commands.unlink(slotKeys.toArray(String[]::new));
				}
				cursor = page;
			}
			while (!cursor.isFinished());
			return deleted;
		}
	}

	private static String escapeGlob(String prefix) {
		StringBuilder escaped = new StringBuilder();
		for (char c : prefix.toCharArray()) {
			if ("*?[]\\".indexOf(c) >= 0) {
				escaped.append('\\');
			}
			escaped.append(c);
		}
		return escaped.toString();
	}

	private static final class Session implements AutoCloseable {

		private final RedisClient client;

		private final StatefulRedisConnection<String, String> connection;

		Session(RedisURI uri, @Nullable Path caCertificate) {
			RedisURI copy = RedisURI.builder(uri).withTimeout(TIMEOUT).build();
			this.client = RedisClient.create(copy);
			if (caCertificate != null) {
				this.client.setOptions(ClientOptions.builder()
					.sslOptions(SslOptions.builder().trustManager(caCertificate.toFile()).build())
					.build());
			}
			try {
				this.connection = this.client.connect();
			}
			catch (RuntimeException ex) {
				LettuceShutdown.shutdown(this.client);
				throw new RedisStartFailedException("Cannot connect to Redis at " + uri + ": " + ex.getMessage(), ex);
			}
		}

		RedisCommands<String, String> commands() {
			return this.connection.sync();
		}

		@Override
		public void close() {
			this.connection.close();
			LettuceShutdown.shutdown(this.client);
		}

	}

}

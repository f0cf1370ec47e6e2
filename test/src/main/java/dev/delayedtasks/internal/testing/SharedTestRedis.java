package dev.delayedtasks.internal.testing;

import dev.delayedtasks.test.RedisKind;
import dev.delayedtasks.test.RedisServer;
import dev.delayedtasks.test.RedisServers;
import org.jspecify.annotations.Nullable;

/**
 * Internal: the Redis every test context of this JVM shares, found or started by the
 * first context that needs one (a URL in {@code DELAYED_TASKS_TEST_REDIS_URL}, else a
 * Testcontainers Redis where Docker answers, else a {@code redis-server} on the
 * {@code PATH}, else the bundled Redis 6.2 binary;
 * {@code -Ddelayed-tasks.test.redis.kind} forces one) and stopped when the last one
 * closes.
 * <p>
 * The one piece of static state here, on purpose: Spring's test context cache keeps
 * contexts alive across test classes, and one server for all of them (each under its own
 * key prefix) is what makes a cached context and a new one meet on the same Redis.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class SharedTestRedis {

	private static final Object lock = new Object();

	private static @Nullable RedisServer server;

	private static int users;

	private SharedTestRedis() {
	}

	/**
	 * Use the shared server, starting it if no context uses it now.
	 * @return the server; {@link #release()} it when the context closes
	 */
	static RedisServer acquire() {
		synchronized (lock) {
			RedisServer current = server;
			if (current == null) {
				RedisServers servers = RedisServers.fromEnvironment();
				RedisKind forced = servers.forcedKind();
				current = servers.shared((forced != null) ? forced : RedisKind.ANY);
				server = current;
			}
			users++;
			return current;
		}
	}

	/**
	 * Stop using the shared server; the last user stops it.
	 */
	static void release() {
		synchronized (lock) {
			users = Math.max(0, users - 1);
			RedisServer current = server;
			if (users == 0 && current != null) {
				server = null;
				current.close();
			}
		}
	}

}

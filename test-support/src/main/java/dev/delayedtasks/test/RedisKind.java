package dev.delayedtasks.test;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Where a test Redis comes from, in the order {@link RedisServers} tries them for
 * {@link #ANY} ({@link #VALKEY} only when asked for).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public enum RedisKind {

	/** The first kind that is available, in declaration order. */
	ANY,

	/**
	 * The server named by the {@code DELAYED_TASKS_TEST_REDIS_URL} environment variable
	 * (shared, never private).
	 */
	URL,

	/** A Redis 7 container started by Testcontainers when a Docker engine answers. */
	DOCKER,

	/** A {@code redis-server} found on the {@code PATH}, started on a free port. */
	PATH_BINARY,

	/**
	 * The Redis 6.2.11 binary shipped in {@code com.github.codemonstur:embedded-redis},
	 * started on a free port.
	 */
	BUNDLED_6_2,

	/**
	 * A {@code valkey-server} found on the {@code PATH}, started on a free port. Private,
	 * TLS, cluster and Sentinel servers of this kind are {@code valkey-server} processes
	 * too (a Sentinel is {@code valkey-server --sentinel}). Never chosen by {@link #ANY}.
	 */
	VALKEY;

	/**
	 * Parse a kind from a property value such as {@code bundled-6.2}, {@code path},
	 * {@code valkey} or {@code url}.
	 * @param value the value, may be {@code null} or blank
	 * @return the kind, or {@code null} when no value was given
	 */
	public static @Nullable RedisKind parse(@Nullable String value) {
		if (value == null || value.isBlank()) {
			return null;
		}
		String normalized = value.trim().toLowerCase(Locale.ROOT).replace('_', '-');
		return switch (normalized) {
			case "any" -> ANY;
			case "url" -> URL;
			case "docker", "testcontainers" -> DOCKER;
			case "path", "path-binary" -> PATH_BINARY;
			case "bundled", "bundled-6.2", "embedded", "6.2" -> BUNDLED_6_2;
			case "valkey" -> VALKEY;
			default -> throw new IllegalArgumentException(
					"Unknown test Redis kind '" + value + "': use one of any, url, docker, path, bundled-6.2, valkey");
		};
	}

}

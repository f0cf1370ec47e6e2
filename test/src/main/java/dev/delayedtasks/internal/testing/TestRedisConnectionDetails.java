package dev.delayedtasks.internal.testing;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;

/**
 * Internal: Spring Boot's Redis connection details for the shared test Redis. As a
 * {@code ConnectionDetails} bean they win over {@code spring.data.redis.*}, as a
 * Testcontainers {@code @ServiceConnection} would; a context that has one keeps it.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class TestRedisConnectionDetails implements DataRedisConnectionDetails, DisposableBean {

	private final @Nullable String username;

	private final @Nullable String password;

	private final Standalone standalone;

	/**
	 * Connection details for a test server.
	 * @param uri its address, with the database and credentials a
	 * {@code DELAYED_TASKS_TEST_REDIS_URL} carries
	 * ({@code redis://user:password@host:port/db})
	 */
	TestRedisConnectionDetails(RedisURI uri) {
		if (uri.isSsl()) {
			throw new IllegalStateException("The test Redis " + uri.getHost() + ":" + uri.getPort()
					+ " speaks TLS, which @AutoConfigureDelayedTasks does not configure: use "
					+ "@AutoConfigureDelayedTasks(provideRedis = false) and configure spring.data.redis.ssl.*");
		}
		RedisCredentials credentials = uri.getCredentialsProvider().resolveCredentials().block();
		this.username = (credentials != null && credentials.hasUsername()) ? credentials.getUsername() : null;
		this.password = (credentials != null && credentials.hasPassword()) ? new String(credentials.getPassword())
				: null;
		this.standalone = Standalone.of(uri.getHost(), uri.getPort(), uri.getDatabase());
	}

	@Override
	public @Nullable String getUsername() {
		return this.username;
	}

	@Override
	public @Nullable String getPassword() {
		return this.password;
	}

	@Override
	public Standalone getStandalone() {
		return this.standalone;
	}

	@Override
	public void destroy() {
		SharedTestRedis.release();
	}

}

package dev.delayedtasks.internal.testing;

import dev.delayedtasks.test.RedisServer;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.context.annotation.Bean;

/**
 * Test auto-configuration behind {@code @AutoConfigureDelayedTasks}: connects the context
 * to the Redis shared by the test run, unless it has Redis connection details of its own
 * (a Testcontainers {@code @ServiceConnection}) or
 * {@code delayed-tasks.test.provide-redis} is {@code false}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@AutoConfiguration(before = DataRedisAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "delayed-tasks.test.provide-redis", matchIfMissing = true)
public final class DelayedTasksTestRedisAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(DataRedisConnectionDetails.class)
	TestRedisConnectionDetails delayedTasksTestRedisConnectionDetails() {
		// Destroyed after the connection factory, which depends on it: it then releases
		// the server.
		RedisServer server = SharedTestRedis.acquire();
		try {
			return new TestRedisConnectionDetails(server.uri());
		}
		catch (RuntimeException ex) {
			SharedTestRedis.release();
			throw ex;
		}
	}

}

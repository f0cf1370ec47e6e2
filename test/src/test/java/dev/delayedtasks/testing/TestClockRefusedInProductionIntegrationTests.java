package dev.delayedtasks.testing;

import java.time.Duration;
import java.time.Instant;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application (no test auto-configuration) refuses to start on a queue whose clock a
 * test moved, and starts once the offset is gone; an offset that appears for a queue the
 * index did not know at start-up moves nothing: an application's scripts read Redis time
 * alone.
 */
@WithRedis
class TestClockRefusedInProductionIntegrationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations
		.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class, DelayedTasksAutoConfiguration.class));

	@Test
	void anApplicationRefusesToStartOnAQueueWithATestClockOffset(TestRedis redis) {
		String meta = redis.keyPrefix() + ":{emails:0}:meta";
		RedisClient client = RedisClient.create(redis.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			RedisCommands<String, String> commands = connection.sync();
			commands.sadd(redis.keyPrefix() + ":queues", "emails");
			commands.hset(meta, "v", "1");
			commands.hset(meta, "o", "3600000");
			ApplicationContextRunner application = this.runner.withPropertyValues(
					"spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.enabled=false");
			application.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).isInstanceOf(DelayedTaskException.class)
					.hasMessageContaining("Queue 'emails' in Redis runs on a test clock moved 3600000 ms ahead")
					.hasMessageContaining("HDEL " + meta + " o");
			});
			commands.hdel(meta, "o");
			application.run((context) -> assertThat(context).hasNotFailed());
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void anOffsetWrittenForAQueueUnknownAtStartUpDoesNotMoveAnApplicationsClock(TestRedis redis) {
		String meta = redis.keyPrefix() + ":{late:0}:meta";
		RedisClient client = RedisClient.create(redis.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			RedisCommands<String, String> commands = connection.sync();
			this.runner
				.withPropertyValues("spring.data.redis.url=" + redis.url(),
						"delayed-tasks.key-prefix=" + redis.keyPrefix(), "delayed-tasks.worker.enabled=false")
				.run((context) -> {
					assertThat(context).hasNotFailed();
					// Written after start-up, before the queue's first task: the start-up
					// check never sees it.
					commands.hset(meta, "o", "3600000");
					DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
					Instant before = Instant.ofEpochSecond(Long.parseLong(commands.time().get(0)));
					TaskId id = scheduler.schedule("late", "payload", Duration.ofMinutes(30));
					TaskInfo info = scheduler.find("late", id).orElseThrow();
					// Thirty minutes from Redis's time, not ninety.
					assertThat(info.dueAt()).isBetween(before.plus(Duration.ofMinutes(30)),
							before.plus(Duration.ofMinutes(31)));
					assertThat(info.state()).isEqualTo(TaskState.SCHEDULED);
				});
		}
		finally {
			client.shutdown();
		}
	}

}

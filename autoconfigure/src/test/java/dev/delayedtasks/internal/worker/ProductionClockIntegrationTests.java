package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * an application (no delayed-tasks-test auto-configuration) never lets a test clock
 * offset in Redis move its time, in eval and functions mode, for a queue already in use
 * and one that appears later, with workers running.
 */
@WithRedis(privateServer = true)
class ProductionClockIntegrationTests {

	private final TestRedis redis;

	ProductionClockIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@ParameterizedTest
	@ValueSource(strings = { "eval", "functions" })
	void anOffsetInRedisNeverMovesTheApplicationsClock(String mode) {
		RedisClient client = RedisClient.create(this.redis.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			RedisCommands<String, String> commands = connection.sync();
			ShortLeases
				.runner(this.redis, "delayed-tasks.scripts.mode=" + mode,
						"delayed-tasks.scripts.load-library=" + mode.equals("functions"))
				.withUserConfiguration(Handlers.class)
				.run((context) -> {
					assertThat(context).hasNotFailed();
					Runs runs = context.getBean(Runs.class);
					DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
					String used = "clk-used-" + mode;
					String late = "clk-late-" + mode;
					// A queue in use first, then an offset written under it and under a
					// queue that appears only now.
					TaskId warm = scheduler.schedule(used, "warm", Duration.ZERO);
					await().atMost(Duration.ofSeconds(10)).until(() -> runs.ran.containsKey(warm.value()));
					for (String queue : List.of(used, late)) {
						commands.hset(this.redis.keyPrefix() + ":{" + queue + ":0}:meta", "o", "3600000");
					}
					Instant redisNow = redisTime(commands);
					TaskId atUsed = scheduler
						.schedule(TaskRequest.of(used, "abs").at(redisNow.plus(Duration.ofSeconds(30))));
					TaskId atLate = scheduler
						.schedule(TaskRequest.of(late, "abs").at(redisNow.plus(Duration.ofSeconds(30))));
					TaskId delayed = scheduler.scheduleAsync(late, "d", Duration.ofMinutes(30)).get();
					Thread.sleep(4000);
					assertThat(runs.ran).doesNotContainKeys(atUsed.value(), atLate.value(), delayed.value());
					TaskInfo info = scheduler.find(late, delayed).orElseThrow();
					assertThat(info.dueAt()).isBetween(redisNow.plus(Duration.ofMinutes(29)),
							redisNow.plus(Duration.ofMinutes(31)));
					assertThat(info.createdAt()).isBetween(redisNow.minusSeconds(5), redisNow.plusSeconds(10));
					for (String queue : List.of(used, late)) {
						commands.hdel(this.redis.keyPrefix() + ":{" + queue + ":0}:meta", "o");
					}
				});
		}
		finally {
			client.shutdown();
		}
	}

	private static Instant redisTime(RedisCommands<String, String> commands) {
		List<String> time = commands.time();
		return Instant.ofEpochSecond(Long.parseLong(time.get(0)), Long.parseLong(time.get(1)) * 1000);
	}

	static final class Runs {

		static final Map<String, Instant> RAN = new ConcurrentHashMap<>();

		final Map<String, Instant> ran = RAN;

	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@Bean
		Runs runs() {
			return new Runs();
		}

		@DelayedTaskHandler(queue = "clk-used-eval")
		void usedEval(String payload, TaskContext task) {
			Runs.RAN.put(task.id().value(), Instant.now());
		}

		@DelayedTaskHandler(queue = "clk-late-eval")
		void lateEval(String payload, TaskContext task) {
			Runs.RAN.put(task.id().value(), Instant.now());
		}

		@DelayedTaskHandler(queue = "clk-used-functions")
		void usedFunctions(String payload, TaskContext task) {
			Runs.RAN.put(task.id().value(), Instant.now());
		}

		@DelayedTaskHandler(queue = "clk-late-functions")
		void lateFunctions(String payload, TaskContext task) {
			Runs.RAN.put(task.id().value(), Instant.now());
		}

	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.LatenessBuckets;
import dev.delayedtasks.internal.store.RedisQueueHistory;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The lateness history through faults: a graceful stop sends the lateness counted since
 * the last record; a deleted stats hash restarts the series without negative counts, and
 * samples from before lateness was kept leave the lateness of the samples after them
 * readable; a run whose handler throws is counted.
 */
@WithRedis
class LatenessHistoryFaultsIntegrationTests {

	private final ApplicationContextRunner runner;

	private final TestRedis redis;

	LatenessHistoryFaultsIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.worker.shutdown-timeout=1s")
			.withUserConfiguration(Handler.class);
	}

	private static long started(StringRedisTemplate redis, String stats) {
		long started = 0;
		for (int bucket = 1; bucket <= LatenessBuckets.COUNT; bucket++) {
			Object count = redis.opsForHash().get(stats, "l" + bucket);
			started += (count != null) ? Long.parseLong((String) count) : 0;
		}
		return started;
	}

	/**
	 * Docs: "at most the last 30 s of an instance that crashes are lost" and the
	 * conventions: SIGTERM never worse than SIGKILL. A graceful stop loses them too.
	 */
	@Test
	void aGracefulStopSendsTheLatenessCountedSinceTheLastRecord() {
		String prefix = this.redis.keyPrefix() + "-stop";
		String[] stats = new String[1];
		this.runner.withPropertyValues("delayed-tasks.key-prefix=" + prefix).run((context) -> {
			stats[0] = context.getBean(StoreSettings.class).keys("late").stats();
			String minutes = context.getBean(StoreSettings.class).keys("late").minutes();
			StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			// The recorder's first record (at start) is done.
			await().atMost(Duration.ofSeconds(10)).until(() -> redis.opsForZSet().zCard(minutes) >= 1);
			for (int i = 0; i < 5; i++) {
				context.getBean(DelayedTaskScheduler.class).enqueue("late", "x" + i);
			}
			Handler handler = context.getBean(Handler.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> handler.runs.get() == 5);
			// graceful close follows (the runner closes the context)
		});
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				LettuceConnectionFactory.createRedisConfiguration(this.redis.url()));
		factory.afterPropertiesSet();
		factory.start();
		try {
			StringRedisTemplate redis = new StringRedisTemplate(factory);
			assertThat(started(redis, stats[0])).as("runs started before a graceful stop, in Redis after it")
				.isEqualTo(5);
		}
		finally {
			factory.destroy();
		}
	}

	/**
	 * A stats hash deleted between samples (counters restart): percentiles never negative
	 * and the restarted series reads the runs after the restart.
	 */
	@Test
	void aDeletedStatsHashRestartsTheSeriesWithoutNegativeCounts() {
		this.runner
			.withPropertyValues("delayed-tasks.key-prefix=" + this.redis.keyPrefix() + "-del",
					"delayed-tasks.monitoring.history=false")
			.run((context) -> {
				StoreSettings settings = context.getBean(StoreSettings.class);
				StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
				String hm = settings.keys("q").minutes();
				long minute = Instant.now().toEpochMilli() / 60000;
				String big = "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,100";
				String small = "3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0";
				String smaller = "5,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0";
				redis.opsForZSet().add(hm, (minute - 4) + ":10:10:0:0:" + big, minute - 4);
				redis.opsForZSet().add(hm, (minute - 3) + ":20:20:0:0:" + big, minute - 3);
				// deleted: counters restart
				redis.opsForZSet().add(hm, (minute - 2) + ":1:1:0:0:" + small, minute - 2);
				redis.opsForZSet().add(hm, (minute - 1) + ":2:2:0:0:" + smaller, minute - 1);
				RedisQueueHistory history = new RedisQueueHistory(context.getBean(StoreScripts.class), settings);
				Instant now = Instant.ofEpochMilli(minute * 60000 + 1000);
				RedisQueueHistory.Lateness lateness = history.lateness("q", Duration.ofMinutes(5), now);
				assertThat(lateness.started()).isEqualTo(2);
				assertThat(lateness.p99Millis()).isEqualTo(1L);
				for (RedisQueueHistory.Period period : history.perMinute("q", Duration.ofMinutes(5), now)) {
					assertThat(period.created()).isGreaterThanOrEqualTo(0);
					if (period.latenessP99Millis() != null) {
						assertThat(period.latenessP99Millis()).isPositive();
					}
				}
				// Old 5-part samples with new ones in one span: the new ones still read.
				String hm2 = settings.keys("q2").minutes();
				redis.opsForZSet().add(hm2, (minute - 3) + ":10:10:0:0", minute - 3);
				redis.opsForZSet().add(hm2, (minute - 2) + ":20:20:0:0:" + small, minute - 2);
				redis.opsForZSet().add(hm2, (minute - 1) + ":30:30:0:0:" + smaller, minute - 1);
				RedisQueueHistory.Lateness mixed = history.lateness("q2", Duration.ofMinutes(5), now);
				assertThat(mixed.started()).as("runs between the two new samples").isEqualTo(2);
			});
	}

	/**
	 * A handler that throws: its run started, so its lateness is counted.
	 */
	@Test
	void aRunWhoseHandlerThrowsIsCounted() {
		this.runner.withPropertyValues("delayed-tasks.key-prefix=" + this.redis.keyPrefix() + "-throw")
			.withUserConfiguration(Thrower.class)
			.run((context) -> {
				context.getBean(DelayedTaskScheduler.class).enqueue("throws", "x");
				Thrower thrower = context.getBean(Thrower.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> thrower.runs.get() >= 1);
				await().atMost(Duration.ofSeconds(5)).until(() -> startedIn(context, "throws") >= 1);
			});
	}

	private static long startedIn(ConfigurableApplicationContext context, String queue) {
		context.getBean(QueueHistoryRecorder.class).recordAll();
		return started(new StringRedisTemplate(context.getBean(RedisConnectionFactory.class)),
				context.getBean(StoreSettings.class).keys(queue).stats());
	}

	@Configuration(proxyBeanMethods = false)
	static class Handler {

		final AtomicInteger runs = new AtomicInteger();

		@DelayedTaskHandler(queue = "late")
		void handle(String payload) {
			this.runs.incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Thrower {

		final AtomicInteger runs = new AtomicInteger();

		@DelayedTaskHandler(queue = "throws")
		void handle(String payload) {
			this.runs.incrementAndGet();
			throw new IllegalStateException("boom");
		}

	}

}

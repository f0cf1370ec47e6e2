package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.LatenessBuckets;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link QueueHistoryRecorder} in an application: an instance with a handler records its
 * queue's counters into the history as it starts (and every 30 s after), and
 * {@code delayed-tasks.monitoring.history=false} turns it off.
 */
@WithRedis
class QueueHistoryRecorderIntegrationTests {

	private final ApplicationContextRunner runner;

	private final String keyPrefix;

	QueueHistoryRecorderIntegrationTests(TestRedis redis) {
		this.keyPrefix = redis.keyPrefix();
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.shutdown-timeout=1s")
			.withUserConfiguration(Handler.class);
	}

	@Test
	void anInstanceWithAHandlerRecordsItsQueuesHistory() {
		this.runner.withPropertyValues("delayed-tasks.key-prefix=" + this.keyPrefix + "-first").run((context) -> {
			String minutes = context.getBean(StoreSettings.class).keys("charted").minutes();
			StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			await().atMost(Duration.ofSeconds(10)).until(() -> redis.opsForZSet().zCard(minutes) == 1);
			assertThat(redis.opsForZSet().range(minutes, 0, -1)).singleElement()
				.satisfies((sample) -> assertThat(sample).endsWith(":0:0:0:0:0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"));
		});
	}

	@Test
	void theLatenessOfTheRunsThisInstanceStartsGoesToTheQueuesCounters() {
		this.runner.run((context) -> {
			context.getBean(DelayedTaskScheduler.class).enqueue("charted", "late or not");
			Handler handler = context.getBean(Handler.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> handler.runs.get() == 1);
			context.getBean(QueueHistoryRecorder.class).recordAll();
			String stats = context.getBean(StoreSettings.class).keys("charted").stats();
			StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			long started = 0;
			for (int bucket = 1; bucket <= LatenessBuckets.COUNT; bucket++) {
				Object count = redis.opsForHash().get(stats, "l" + bucket);
				started += (count != null) ? Long.parseLong((String) count) : 0;
			}
			assertThat(started).isEqualTo(1);
			assertThat(context.getBean(LatenessRecorder.class).take("charted")).containsOnly(0L);
		});
	}

	@Test
	void historyOffRecordsNothing() {
		this.runner
			.withPropertyValues("delayed-tasks.monitoring.history=false",
					"delayed-tasks.key-prefix=" + this.keyPrefix + "-off")
			.run((context) -> {
				assertThat(context).doesNotHaveBean(QueueHistoryRecorder.class);
				assertThat(context).doesNotHaveBean(LatenessRecorder.class);
				String minutes = context.getBean(StoreSettings.class).keys("charted").minutes();
				StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
				assertThat(redis.hasKey(minutes)).isFalse();
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class Handler {

		final AtomicInteger runs = new AtomicInteger();

		@DelayedTaskHandler(queue = "charted")
		void handle(String payload) {
			this.runs.incrementAndGet();
		}

	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;

import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
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

	QueueHistoryRecorderIntegrationTests(TestRedis redis) {
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.shutdown-timeout=1s")
			.withUserConfiguration(Handler.class);
	}

	@Test
	void anInstanceWithAHandlerRecordsItsQueuesHistory() {
		this.runner.run((context) -> {
			String minutes = context.getBean(StoreSettings.class).keys("charted").minutes();
			StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			await().atMost(Duration.ofSeconds(10)).until(() -> redis.opsForZSet().zCard(minutes) == 1);
			assertThat(redis.opsForZSet().range(minutes, 0, -1)).singleElement()
				.satisfies((sample) -> assertThat(sample).endsWith(":0:0:0:0"));
		});
	}

	@Test
	void historyOffRecordsNothing() {
		this.runner.withPropertyValues("delayed-tasks.monitoring.history=false").run((context) -> {
			assertThat(context).doesNotHaveBean(QueueHistoryRecorder.class);
			String minutes = context.getBean(StoreSettings.class).keys("charted").minutes();
			StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			assertThat(redis.hasKey(minutes)).isFalse();
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Handler {

		@DelayedTaskHandler(queue = "charted")
		void handle(String payload) {
		}

	}

}

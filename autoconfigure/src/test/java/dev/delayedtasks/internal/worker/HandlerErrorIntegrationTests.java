package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.Map;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A run that ends in a {@link Throwable} that is not an {@link Exception} still ends: it
 * is retried and dead-lettered like any failure, instead of staying leased for as long as
 * the instance lives.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class HandlerErrorIntegrationTests {

	private static final String QUEUE = "exec-errors";

	private static final String FAILING = "exec-failure-logs";

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	HandlerErrorIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis, "delayed-tasks.retry.max-retries=1", "delayed-tasks.retry.delay=100ms",
				"delayed-tasks.retry.jitter=0ms");
	}

	@Test
	void payloadClassWhoseStaticInitializerFailsIsRetriedThenDeadLettered() {
		this.runner.withUserConfiguration(ExplodingPayloadHandler.class).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DeadLetters deadLetters = context.getBean(DeadLetters.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			// A map, so the producer never loads the payload class.
			TaskId id = scheduler.enqueue(QUEUE, Map.of("value", "x"));
			await().atMost(Duration.ofSeconds(10)).until(() -> deadLetters.count(QUEUE) == 1);
			assertThat(deadLetters.list(QUEUE, 10)).singleElement().satisfies((letter) -> {
				assertThat(letter.id()).isEqualTo(id);
				assertThat(letter.reason()).isEqualTo("retries-exhausted");
				assertThat(letter.attempts()).isEqualTo(2);
				// First the initializer's failure, then the class that could not be
				// initialized.
				assertThat(letter.exceptionType()).isIn(ExceptionInInitializerError.class.getName(),
						NoClassDefFoundError.class.getName());
			});
			PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), QUEUE);
			assertThat(redis.opsForZSet().zCard(keys.lease())).isZero();
			assertThat(context.getBean(DelayedTaskHandlerRegistry.class).getHandlers())
				.allSatisfy((handler) -> assertThat(handler.activeTasks()).isZero());
		});
	}

	@Test
	void eachFailureIsLoggedOnceWithItsStackTraceAndTheRetryWithItsDueTime(CapturedOutput output) {
		this.runner.withUserConfiguration(FailingHandler.class).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DeadLetters deadLetters = context.getBean(DeadLetters.class);
			TaskId id = scheduler.enqueue(FAILING, "payload");
			await().atMost(Duration.ofSeconds(10)).until(() -> deadLetters.count(FAILING) == 1);
			await().atMost(Duration.ofSeconds(2))
				.untilAsserted(() -> assertThat(output.getOut()).contains("moved to the dead letters"));
			String log = output.getOut();
			assertThat(log)
				.containsOnlyOnce("Task " + id + " of queue '" + FAILING + "' failed (attempt 1); retry due at ")
				.containsOnlyOnce("Task " + id + " of queue '" + FAILING
						+ "' failed for good after attempt 2 (retries-exhausted), moved to the dead letters");
			// The stack trace follows each line, down to the handler's frame.
			assertThat(log.split("downstream is down", -1)).hasSize(3);
			assertThat(log).contains("at " + FailingHandler.class.getName() + ".handle(");
		});
	}

	/** A payload type that cannot be initialized. */
	record ExplodingPayload(String value) {

		private static final int BOOM = explode();

		private static int explode() {
			throw new IllegalStateException("static initializer of the payload class failed");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FailingHandler {

		@DelayedTaskHandler(queue = FAILING)
		void handle(String payload) {
			throw new IllegalStateException("downstream is down");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ExplodingPayloadHandler {

		@DelayedTaskHandler(queue = QUEUE)
		void handle(ExplodingPayload payload) {
			throw new IllegalStateException("never reached: " + payload);
		}

	}

}

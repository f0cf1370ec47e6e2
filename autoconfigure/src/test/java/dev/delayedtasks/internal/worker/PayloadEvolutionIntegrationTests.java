package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What docs/dashboard.md says of stored payloads whose type changed, with the
 * application's Jackson as Spring Boot configures it: a renamed field is dropped and the
 * task runs without it; a field whose type changed dead-letters the task as
 * {@code unreadable-payload} at once; redriving it with a mended payload
 * ({@link DeadLetters#redrive(String, TaskId, Instant, Object)}) runs it with the new
 * payload.
 */
@WithRedis
class PayloadEvolutionIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final ApplicationContextRunner runner;

	PayloadEvolutionIntegrationTests(TestRedis redis) {
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.shutdown-timeout=1s")
			.withUserConfiguration(OrderHandler.class);
	}

	@Test
	void aRenamedFieldIsDroppedAndATypeChangeIsDeadLetteredThenMendedAndRedriven() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DeadLetters deadLetters = context.getBean(DeadLetters.class);
			OrderHandler handler = context.getBean(OrderHandler.class);
			// Stored by the previous version of the producer: "name" became "sku".
			scheduler.enqueue("orders", Map.of("name", "widget", "quantity", 3));
			await().atMost(WAIT).until(() -> handler.received.contains(new OrderV2(3, null)));
			// Stored when quantity was a string.
			TaskId old = scheduler.enqueue("orders", Map.of("sku", "gadget", "quantity", "twelve"));
			await().atMost(WAIT).until(() -> deadLetters.count("orders") == 1);
			DeadLetter letter = deadLetters.list("orders", 1).get(0);
			assertThat(letter.id()).isEqualTo(old);
			assertThat(letter.reason()).isEqualTo("unreadable-payload");
			assertThat(letter.attempts()).isEqualTo(1);
			assertThat(deadLetters.payload("orders", old)).hasValueSatisfying(
					(json) -> assertThat(json).contains("\"sku\":\"gadget\"", "\"quantity\":\"twelve\""));
			assertThat(deadLetters.redrive("orders", old, letter.deadAt(), Map.of("sku", "gadget", "quantity", 12)))
				.isTrue();
			await().atMost(WAIT).until(() -> handler.received.contains(new OrderV2(12, "gadget")));
			assertThat(deadLetters.count("orders")).isZero();
		});
	}

	record OrderV2(int quantity, @Nullable String sku) {
	}

	@Configuration(proxyBeanMethods = false)
	static class OrderHandler {

		final List<OrderV2> received = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = "orders")
		void handle(OrderV2 order) {
			this.received.add(order);
		}

	}

}

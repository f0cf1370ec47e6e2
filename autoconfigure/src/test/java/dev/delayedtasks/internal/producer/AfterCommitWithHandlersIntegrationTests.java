package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * After-commit scheduling as an application uses it: a {@code @Transactional} service
 * method that saves a row and schedules a task with the default
 * {@code delayed-tasks.producer.after-commit=true}, and a {@code @DelayedTaskHandler} in
 * the same application that runs the task, which finds the committed row. A method that
 * throws leaves neither the row nor a run.
 */
@WithRedis
class AfterCommitWithHandlersIntegrationTests {

	private final TestRedis redis;

	AfterCommitWithHandlersIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void theHandlerRunsTheTasksOfCommittedTransactionsOnlyAndSeesTheirRows() {
		TransactionalApp
			.runner(this.redis, "delayed-tasks.worker.enabled=true", "delayed-tasks.producer.after-commit=true",
					"delayed-tasks.worker.shutdown-timeout=1s")
			.withUserConfiguration(Orders.class)
			.run((context) -> {
				OrderService orders = context.getBean(OrderService.class);
				Receipts receipts = context.getBean(Receipts.class);
				orders.place("order-1", false);
				assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> orders.place("order-2", true));
				orders.place("order-3", false);
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(receipts.sent).containsExactlyInAnyOrder("order-1: found",
							"order-3: found"));
				// order-2's task was never stored: nothing is left to run it later.
				await().during(Duration.ofSeconds(1))
					.atMost(Duration.ofSeconds(3))
					.untilAsserted(() -> assertThat(receipts.sent).hasSize(2));
			});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class Orders {

		@Bean
		OrderService orderService(JdbcTemplate jdbc, DelayedTaskScheduler scheduler) {
			return new OrderService(jdbc, scheduler);
		}

		@Bean
		Receipts receipts(JdbcTemplate jdbc) {
			return new Receipts(jdbc);
		}

	}

	static class OrderService {

		private final JdbcTemplate jdbc;

		private final DelayedTaskScheduler scheduler;

		OrderService(JdbcTemplate jdbc, DelayedTaskScheduler scheduler) {
			this.jdbc = jdbc;
			this.scheduler = scheduler;
		}

		@Transactional
		void place(String order, boolean fail) {
			this.jdbc.update("INSERT INTO orders (id) VALUES (?)", order);
			// No afterCommit(): delayed-tasks.producer.after-commit=true makes it the
			// default inside the transaction.
			this.scheduler.schedule(TaskRequest.of("receipts", order));
			if (fail) {
				throw new IllegalStateException("payment declined for " + order);
			}
		}

	}

	static class Receipts {

		final List<String> sent = new CopyOnWriteArrayList<>();

		private final JdbcTemplate jdbc;

		Receipts(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		@DelayedTaskHandler(queue = "receipts")
		void send(String order) {
			int rows = this.jdbc.queryForObject("SELECT COUNT(*) FROM orders WHERE id = ?", Integer.class, order);
			this.sent.add(order + ": " + ((rows == 1) ? "found" : "missing"));
		}

	}

}

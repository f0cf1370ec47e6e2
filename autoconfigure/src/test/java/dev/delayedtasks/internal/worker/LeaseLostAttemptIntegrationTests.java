package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis pauses for about one lease while a handler runs; the local check interrupts the
 * handler ("a lost lease stops its handler"). Is that interrupt charged as a failed
 * attempt of the task? handling.md: max-deliveries "counts only leases that expired";
 * "ordinary failures count against the task's max attempts".
 */
@WithRedis(privateServer = true)
class LeaseLostAttemptIntegrationTests {

	private static final String QUEUE = "lease-lost";

	static final List<String> EVENTS = new CopyOnWriteArrayList<>();

	private final TestRedis redis;

	LeaseLostAttemptIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void aHandlerInterruptedBecauseRedisStalledIsNotChargedAnAttempt() {
		ShortLeases.runner(this.redis).withUserConfiguration(Handlers.class).run((context) -> {
			assertThat(context).hasNotFailed();
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId id = scheduler.schedule(TaskRequest.of(QUEUE, "once").maxAttempts(1));
			await().atMost(Duration.ofSeconds(10)).until(() -> !EVENTS.isEmpty());
			RedisClient client = RedisClient.create(this.redis.uri());
			try (StatefulRedisConnection<String, String> admin = client.connect()) {
				admin.sync().clientPause(2000);
				await().atMost(Duration.ofSeconds(20))
					.untilAsserted(() -> assertThat(admin.sync().ping()).isEqualTo("PONG"));
			}
			finally {
				client.shutdown();
			}
			Thread.sleep(6000);
			System.out.println("lease lost: events " + EVENTS + "; task now " + scheduler.find(QUEUE, id));
			assertThat(EVENTS).as("runs of a task whose handler never failed on its own")
				.anyMatch((event) -> event.startsWith("finished"));
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@DelayedTaskHandler(queue = QUEUE)
		void handle(String payload, TaskContext context) throws InterruptedException {
			EVENTS.add("start attempt=" + context.attempt() + " delivery=" + context.deliveryCount());
			try {
				Thread.sleep((context.deliveryCount() == 1) ? 4000 : 100);
			}
			catch (InterruptedException ex) {
				EVENTS.add("interrupted");
				throw ex;
			}
			EVENTS.add("finished");
		}

	}

}

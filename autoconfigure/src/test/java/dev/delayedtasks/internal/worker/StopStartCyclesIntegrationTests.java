package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * memory over time across stop/start cycles (threads, Redis connections, held runs), each
 * cycle running a task.
 */
@WithRedis(privateServer = true)
class StopStartCyclesIntegrationTests {

	private static final String QUEUE = "cycles";

	private static final int CYCLES = 25;

	static final Set<String> RAN = ConcurrentHashMap.newKeySet();

	private final TestRedis redis;

	StopStartCyclesIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void stopStartCyclesLeakNoThreadsNorConnections() {
		ShortLeases.runner(this.redis, "delayed-tasks.worker.block-timeout=200ms")
			.withUserConfiguration(Handlers.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				HandlerContainer container = context.getBean(DelayedTaskHandlerRegistry.class)
					.getHandlers()
					.stream()
					.filter((handler) -> handler.queue().equals(QUEUE))
					.findFirst()
					.orElseThrow();
				RedisClient client = RedisClient.create(this.redis.uri());
				try (StatefulRedisConnection<String, String> admin = client.connect()) {
					String payload0 = "c-warm";
					scheduler.enqueue(QUEUE, payload0);
					await().atMost(Duration.ofSeconds(10)).until(() -> RAN.contains(payload0));
					Thread.sleep(500);
					int threads0 = queueThreads().size();
					long clients0 = clients(admin);
					for (int i = 0; i < CYCLES; i++) {
						container.stop();
						container.start();
						String payload = "c-" + i;
						scheduler.enqueue(QUEUE, payload);
						await().atMost(Duration.ofSeconds(10)).until(() -> RAN.contains(payload));
					}
					Thread.sleep(1500);
					List<String> threads = queueThreads();
					long clients = clients(admin);
					System.out.println("cycles: queue threads " + threads0 + " -> " + threads.size() + " " + threads
							+ "; redis clients " + clients0 + " -> " + clients);
					assertThat(threads.size()).as("queue threads after %d cycles", CYCLES)
						.isLessThanOrEqualTo(threads0);
					assertThat(clients).as("Redis clients after %d cycles", CYCLES).isLessThanOrEqualTo(clients0);
				}
				finally {
					client.shutdown();
				}
			});
	}

	private static long clients(StatefulRedisConnection<String, String> admin) {
		return admin.sync().clientList().lines().filter((line) -> !line.isBlank()).count();
	}

	private static List<String> queueThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter(Thread::isAlive)
			.map(Thread::getName)
			.filter((name) -> name.contains(QUEUE))
			.sorted()
			.toList();
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@DelayedTaskHandler(queue = QUEUE)
		void handle(String payload, TaskContext context) {
			RAN.add(payload);
		}

	}

}

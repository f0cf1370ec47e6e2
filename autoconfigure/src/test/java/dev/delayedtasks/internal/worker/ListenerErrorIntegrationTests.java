package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A listener that throws an {@link Error} (here a {@link StackOverflowError} from deep
 * recursion) on every call of the worker's threads never stops a queue: the completion
 * and dispatcher threads go on, every task is acknowledged once and the next ones are
 * claimed.
 */
@WithRedis
class ListenerErrorIntegrationTests {

	private static final String QUEUE = "listener-errors";

	private static final Set<String> RAN = ConcurrentHashMap.newKeySet();

	private final TestRedis redis;

	ListenerErrorIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void aListenerThrowingStackOverflowErrorDoesNotStopTheQueue() {
		RAN.clear();
		ShortLeases.runner(this.redis).withUserConfiguration(Handlers.class).run((context) -> {
			assertThat(context).hasNotFailed();
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			List<TaskId> ids = new ArrayList<>();
			for (int round = 0; round < 3; round++) {
				for (int i = 0; i < 10; i++) {
					ids.add(scheduler.enqueue(QUEUE, "task-" + round + "-" + i));
				}
				// Each round after the listener has thrown on the previous one's ends.
				List<TaskId> sent = List.copyOf(ids);
				await().atMost(Duration.ofSeconds(20))
					.untilAsserted(() -> assertThat(RAN).containsAll(sent.stream().map(TaskId::value).toList()));
			}
			// Acknowledged, not left leased: nothing of the queue is left.
			await().atMost(Duration.ofSeconds(20))
				.untilAsserted(() -> assertThat(ids).allSatisfy(
						(id) -> assertThat(scheduler.find(QUEUE, id)).as("task %s after its run", id).isEmpty()));
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@DelayedTaskHandler(queue = QUEUE, concurrency = "4")
		void handle(String payload, TaskContext context) {
			RAN.add(context.id().value());
		}

		@Bean
		DelayedTaskListener overflowingListener() {
			return new DelayedTaskListener() {

				@Override
				public void started(TaskContext context) {
					overflow(0);
				}

				@Override
				public void succeeded(TaskContext context, Duration runTime) {
					overflow(0);
				}

			};
		}

		private static int overflow(int depth) {
			return overflow(depth + 1) + 1;
		}

	}

}

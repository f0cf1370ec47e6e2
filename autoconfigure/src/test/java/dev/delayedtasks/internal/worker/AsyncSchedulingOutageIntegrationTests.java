package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.ReactiveDelayedTaskScheduler;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.ScheduleResult.Outcome;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The non-blocking API while Redis goes away and comes back: calls fail with a
 * {@link TaskStoreException} naming the task (no thread blocks meanwhile), and work again
 * once Redis is back.
 */
@WithRedis(privateServer = true)
class AsyncSchedulingOutageIntegrationTests {

	private static final String QUEUE = "async-outage";

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	AsyncSchedulingOutageIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis, "spring.data.redis.timeout=500ms",
				"spring.data.redis.connect-timeout=500ms", "delayed-tasks.worker.enabled=false");
	}

	@Test
	void callsFailWithTaskStoreExceptionWhileRedisIsGoneAndWorkAgainWhenItIsBack() {
		assertThat(this.redis.server()).isInstanceOf(RedisProcess.class);
		RedisProcess server = (RedisProcess) this.redis.server();
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			ReactiveDelayedTaskScheduler reactive = context.getBean(ReactiveDelayedTaskScheduler.class);
			assertThat(
					get(scheduler.submitAsync(TaskRequest.of(QUEUE, "before").delay(Duration.ofMinutes(5)))).outcome())
				.isEqualTo(Outcome.CREATED);
			server.kill();
			try {
				long start = System.nanoTime();
				CompletableFuture<ScheduleResult> during = scheduler
					.submitAsync(TaskRequest.of(QUEUE, "during").id("during-outage").delay(Duration.ofMinutes(5)));
				// Returned at once: nothing blocks the caller while Redis is gone.
				assertThat(System.nanoTime() - start).isLessThan(TimeUnit.MILLISECONDS.toNanos(400));
				assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> get(during))
					.havingCause()
					.isInstanceOfSatisfying(TaskStoreException.class,
							(ex) -> assertThat(ex.getTaskId()).isEqualTo(TaskId.of("during-outage")))
					.withMessageContaining("enqueue.lua")
					.withMessageContaining("'" + QUEUE + "'")
					.withMessageContaining("during-outage");
				// Many in flight while Redis is gone: all fail within about one command
				// timeout, not one batch per timeout.
				List<CompletableFuture<TaskId>> many = new ArrayList<>();
				long manyStart = System.nanoTime();
				for (int i = 0; i < 2000; i++) {
					many.add(scheduler.scheduleAsync(QUEUE, "during-" + i, Duration.ofMinutes(5)));
				}
				for (CompletableFuture<TaskId> future : many) {
					assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> get(future))
						.havingCause()
						.isInstanceOf(TaskStoreException.class);
				}
				assertThat(Duration.ofNanos(System.nanoTime() - manyStart)).isLessThan(Duration.ofSeconds(5));
				assertThatExceptionOfType(TaskStoreException.class)
					.isThrownBy(() -> reactive.enqueue(QUEUE, "during").block(Duration.ofSeconds(10)));
				assertThatExceptionOfType(ExecutionException.class)
					.isThrownBy(() -> get(scheduler.cancelAsync(QUEUE, TaskId.of("during-outage"))))
					.havingCause()
					.isInstanceOf(TaskStoreException.class);
				assertThatExceptionOfType(ExecutionException.class)
					.isThrownBy(() -> get(scheduler.findAsync(QUEUE, TaskId.of("during-outage"))))
					.havingCause()
					.isInstanceOf(TaskStoreException.class)
					.withMessageContaining("Redis failed to read task during-outage");
			}
			finally {
				server.restart();
			}
			await().atMost(Duration.ofSeconds(60))
				.pollInterval(Duration.ofMillis(200))
				.ignoreExceptions()
				.untilAsserted(() -> assertThat(
						get(scheduler.submitAsync(TaskRequest.of(QUEUE, "after").id("after-outage"))).id())
					.isEqualTo(TaskId.of("after-outage")));
			assertThat(reactive.find(QUEUE, TaskId.of("after-outage")).block(Duration.ofSeconds(10))).isNotNull();
		});
	}

	private static <T> T get(CompletableFuture<T> future) throws Exception {
		return future.get(10, TimeUnit.SECONDS);
	}

}

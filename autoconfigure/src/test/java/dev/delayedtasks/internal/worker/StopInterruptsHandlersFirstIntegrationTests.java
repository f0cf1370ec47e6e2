package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

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

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * a graceful stop while Redis is paused, with claimed tasks still waiting in a one-thread
 * handler pool (so the stop has unstarted tasks to release). The docs: "Running handlers
 * are interrupted and get shutdown-timeout to return" and "The whole stop counts against
 * the one timeout ... Only calls to Redis still made after the timeout (the final release
 * of unstarted tasks) may add up to the command timeout".
 */
@WithRedis(privateServer = true)
class StopInterruptsHandlersFirstIntegrationTests {

	private static final String QUEUE = "stall-stop";

	private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(1);

	private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(4);

	static final List<String> EVENTS = new CopyOnWriteArrayList<>();

	static final AtomicLong interruptedAt = new AtomicLong();

	static final Map<String, AtomicInteger> STARTS = new ConcurrentHashMap<>();

	private final TestRedis redis;

	StopInterruptsHandlersFirstIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void aStopDuringAStallInterruptsRunningHandlersAndEndsWithinTimeoutPlusOneCommandTimeout() {
		ShortLeases
			.runner(this.redis, "delayed-tasks.worker.lease-duration=30s", "delayed-tasks.worker.max-claim=4",
					"delayed-tasks.worker.block-timeout=200ms",
					"delayed-tasks.worker.shutdown-timeout=" + SHUTDOWN_TIMEOUT.toMillis() + "ms",
					"spring.data.redis.timeout=" + COMMAND_TIMEOUT.toMillis() + "ms")
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
				for (int i = 0; i < 3; i++) {
					scheduler.enqueue(QUEUE, "t-" + i);
				}
				// One runs on the single pool thread, two wait in the pool's queue.
				await().atMost(Duration.ofSeconds(10)).until(() -> STARTS.size() == 1);
				Thread.sleep(500);
				RedisClient client = RedisClient.create(this.redis.uri());
				long stopStart;
				long stopEnd;
				try (StatefulRedisConnection<String, String> admin = client.connect()) {
					admin.sync().clientPause(15_000);
					Thread.sleep(100);
					stopStart = System.nanoTime();
					container.stop();
					stopEnd = System.nanoTime();
					await().atMost(Duration.ofSeconds(30))
						.untilAsserted(() -> assertThat(admin.sync().ping()).isEqualTo("PONG"));
				}
				finally {
					client.shutdown();
				}
				Duration took = Duration.ofNanos(stopEnd - stopStart);
				Duration interruptAfter = (interruptedAt.get() != 0) ? Duration.ofNanos(interruptedAt.get() - stopStart)
						: null;
				System.out.println("stall stop: stop took " + took + ", handler interrupted " + interruptAfter
						+ " after stop() was called; events " + EVENTS);
				assertThat(interruptAfter).as("handler interrupted after stop()").isNotNull();
				assertThat(interruptAfter).as("time from stop() to the running handler's interrupt")
					.isLessThan(SHUTDOWN_TIMEOUT);
				assertThat(took).as("stop during a stall")
					.isLessThan(SHUTDOWN_TIMEOUT.plus(COMMAND_TIMEOUT).plusMillis(500));
			});
	}

	@Test
	void aStopInterruptsAHandlerRunningOnTheCallersThreadAtOnce() {
		ShortLeases
			.runner(this.redis, "delayed-tasks.worker.lease-duration=30s", "delayed-tasks.worker.block-timeout=1s",
					"delayed-tasks.worker.shutdown-timeout=" + SHUTDOWN_TIMEOUT.toMillis() + "ms")
			.withUserConfiguration(InlineHandlers.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				HandlerContainer container = context.getBean(DelayedTaskHandlerRegistry.class)
					.getHandlers()
					.stream()
					.filter((handler) -> handler.queue().equals(INLINE_QUEUE))
					.findFirst()
					.orElseThrow();
				scheduler.enqueue(INLINE_QUEUE, "inline");
				await().atMost(Duration.ofSeconds(10)).until(() -> inlineStarted.get() != 0);
				long stopStart = System.nanoTime();
				container.stop();
				long stopEnd = System.nanoTime();
				Duration interruptAfter = (inlineInterrupted.get() != 0)
						? Duration.ofNanos(inlineInterrupted.get() - stopStart) : null;
				System.out.println("inline stop: stop took " + Duration.ofNanos(stopEnd - stopStart)
						+ ", handler interrupted " + interruptAfter + " after stop()");
				assertThat(interruptAfter).as("time from stop() to the interrupt of a handler on the caller's thread")
					.isNotNull()
					.isLessThan(SHUTDOWN_TIMEOUT.dividedBy(2));
			});
	}

	static final String INLINE_QUEUE = "inline-stop";

	static final AtomicLong inlineStarted = new AtomicLong();

	static final AtomicLong inlineInterrupted = new AtomicLong();

	@Configuration(proxyBeanMethods = false)
	static class InlineHandlers {

		@DelayedTaskHandler(queue = INLINE_QUEUE)
		void handle(String payload, TaskContext context) throws InterruptedException {
			inlineStarted.set(System.nanoTime());
			try {
				Thread.sleep(60_000);
			}
			catch (InterruptedException ex) {
				inlineInterrupted.compareAndSet(0, System.nanoTime());
				throw ex;
			}
		}

		/** As a CallerRunsPolicy under load, or a SyncTaskExecutor. */
		@Bean(name = DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME, defaultCandidate = false)
		Executor inline() {
			return Runnable::run;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@DelayedTaskHandler(queue = QUEUE, concurrency = "3")
		void handle(String payload, TaskContext context) {
			STARTS.computeIfAbsent(context.id().value(), (k) -> new AtomicInteger()).incrementAndGet();
			EVENTS.add("start " + payload);
			try {
				Thread.sleep(60_000);
			}
			catch (InterruptedException ex) {
				interruptedAt.compareAndSet(0, System.nanoTime());
				EVENTS.add("interrupted " + payload);
				Thread.currentThread().interrupt();
			}
		}

		@Bean(name = DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME, defaultCandidate = false)
		Executor onePool() {
			ThreadPoolTaskExecutor pool = new ThreadPoolTaskExecutor();
			pool.setCorePoolSize(1);
			pool.setMaxPoolSize(1);
			pool.setQueueCapacity(100);
			pool.setAcceptTasksAfterContextClose(true);
			pool.setThreadNamePrefix("one-");
			pool.initialize();
			return pool;
		}

	}

}

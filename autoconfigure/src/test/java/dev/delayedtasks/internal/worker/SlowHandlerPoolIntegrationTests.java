package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * a bounded handler pool (one thread, a queue) slower than the start window: runs wait in
 * the pool's queue past their window, are released and claimed again. Promised: "never
 * starts late", "no task runs twice because of it". Also watched: how many dead runs pile
 * up in the pool's queue.
 */
@WithRedis
class SlowHandlerPoolIntegrationTests {

	private static final String QUEUE = "slow-pool";

	private static final int TASKS = 8;

	static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();

	static final Map<String, AtomicInteger> RUNNING = new ConcurrentHashMap<>();

	static final AtomicInteger MAX_SAME_ID_AT_ONCE = new AtomicInteger();

	static volatile ThreadPoolTaskExecutor pool;

	private final TestRedis redis;

	SlowHandlerPoolIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void runsWaitingInASlowPoolPastTheirWindowRunOnceEach() {
		ShortLeases.runner(this.redis).withUserConfiguration(Handlers.class).run((context) -> {
			assertThat(context).hasNotFailed();
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			List<String> ids = new ArrayList<>();
			long start = System.nanoTime();
			for (int i = 0; i < TASKS; i++) {
				ids.add(scheduler.enqueue(QUEUE, "p-" + i).value());
			}
			int maxQueued = 0;
			long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
			while (System.nanoTime() < deadline && !ids.stream().allMatch(RUNS::containsKey)) {
				maxQueued = Math.max(maxQueued, pool.getThreadPoolExecutor().getQueue().size());
				Thread.sleep(50);
			}
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			ShortLeases.assertNoFurtherRun(() -> assertThat(ids)
				.allSatisfy((id) -> assertThat(RUNS.get(id)).as("runs of %s", id).isNotNull().hasValue(1)));
			System.out.println("slow pool: " + TASKS + " tasks of 1.2 s on one thread took " + took
					+ "; most runs queued in the pool at once " + maxQueued + "; runs " + RUNS);
			assertThat(MAX_SAME_ID_AT_ONCE.get()).isEqualTo(1);
			ShortLeases.assertPartitionEmpty(context.getBean(StringRedisTemplate.class), this.redis, QUEUE);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@DelayedTaskHandler(queue = QUEUE, concurrency = "4")
		void handle(String payload, TaskContext context) throws InterruptedException {
			String id = context.id().value();
			RUNS.computeIfAbsent(id, (k) -> new AtomicInteger()).incrementAndGet();
			int now = RUNNING.computeIfAbsent(id, (k) -> new AtomicInteger()).incrementAndGet();
			MAX_SAME_ID_AT_ONCE.accumulateAndGet(now, Math::max);
			try {
				Thread.sleep(1200);
			}
			finally {
				RUNNING.get(id).decrementAndGet();
			}
		}

		@Bean(name = DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME, defaultCandidate = false)
		Executor onePool() {
			ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
			executor.setCorePoolSize(1);
			executor.setMaxPoolSize(1);
			executor.setQueueCapacity(10_000);
			executor.setAcceptTasksAfterContextClose(true);
			executor.setThreadNamePrefix("slow-");
			executor.initialize();
			pool = executor;
			return executor;
		}

	}

}

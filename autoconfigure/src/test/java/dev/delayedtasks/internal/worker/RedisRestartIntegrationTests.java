package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.StoreInvariantChecks;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis with {@code appendfsync always} killed with SIGKILL and started again while tasks
 * are being scheduled and run: no acknowledged enqueue is lost, and the dispatcher and
 * the timer reconnect by themselves (the restarted server has no scripts cached either).
 */
@WithRedis(privateServer = true, arguments = { "--appendonly", "yes", "--appendfsync", "always" })
class RedisRestartIntegrationTests {

	private static final String QUEUE = "restart";

	private static final Duration LOAD = Duration.ofSeconds(6);

	private static final Duration KILL_AFTER = Duration.ofSeconds(2);

	private static final Duration DOWNTIME = Duration.ofSeconds(1);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	RedisRestartIntegrationTests(TestRedis redis) {
		this.redis = redis;
		// A dispatcher blocks 5 s: a task started on a block timeout instead of by the
		// timer would be seconds late.
		this.runner = ShortLeases
			.runner(redis, "spring.data.redis.timeout=500ms", "delayed-tasks.worker.block-timeout=5s")
			.withUserConfiguration(JobRuns.class)
			.withPropertyValues("test.queue=" + QUEUE);
	}

	@Test
	void acknowledgedEnqueuesSurviveARestartAndTheWorkerReconnects() {
		assertThat(this.redis.server()).as("a restart needs a redis-server process of this JVM's own")
			.isInstanceOf(RedisProcess.class);
		RedisProcess server = (RedisProcess) this.redis.server();
		this.runner.run((context) -> {
			JobRuns handlers = context.getBean(JobRuns.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			List<String> acknowledged = new CopyOnWriteArrayList<>();
			AtomicInteger failed = new AtomicInteger();
			AtomicLong slowestFailureMs = new AtomicLong();
			AtomicLong firstSuccessAfterRestart = new AtomicLong();
			AtomicLong restartedAt = new AtomicLong();
			Thread producer = new Thread(() -> {
				long end = System.nanoTime() + LOAD.toNanos();
				for (int i = 0; System.nanoTime() < end; i++) {
					String name = "job-" + i;
					long start = System.nanoTime();
					try {
						scheduler.schedule(QUEUE, new JobRuns.Job(name),
								Duration.ofMillis(ThreadLocalRandom.current().nextInt(1500)));
						acknowledged.add(name);
						if (restartedAt.get() != 0) {
							firstSuccessAfterRestart.compareAndSet(0, System.nanoTime());
						}
					}
					catch (TaskStoreException ex) {
						failed.incrementAndGet();
						slowestFailureMs.accumulateAndGet((System.nanoTime() - start) / 1_000_000, Math::max);
					}
					sleep(5);
				}
			}, "restart-producer");
			producer.start();
			sleep(KILL_AFTER.toMillis());
			server.kill();
			long killedAt = System.nanoTime();
			int acknowledgedAtKill = acknowledged.size();
			sleep(DOWNTIME.toMillis());
			server.restart();
			restartedAt.set(System.nanoTime());
			producer.join();

			await().atMost(Duration.ofSeconds(30))
				.until(() -> acknowledged.stream().allMatch((name) -> handlers.runs(name) >= 1));
			long duplicates = acknowledged.stream().filter((name) -> handlers.runs(name) > 1).count();
			long reconnectMs = (firstSuccessAfterRestart.get() - restartedAt.get()) / 1_000_000;
			System.out.println("restart acknowledged=" + acknowledged.size() + " (at kill " + acknowledgedAtKill
					+ ") failed_calls=" + failed.get() + " slowest_failure_ms=" + slowestFailureMs.get()
					+ " first_enqueue_after_restart_ms=" + reconnectMs + " duplicates=" + duplicates + " downtime_ms="
					+ (restartedAt.get() - killedAt) / 1_000_000);
			assertThat(acknowledgedAtKill).isPositive();
			assertThat(acknowledged.size()).as("scheduling resumed after the restart")
				.isGreaterThan(acknowledgedAtKill);
			assertThat(failed.get()).as("calls during the downtime failed").isPositive();
			assertThat(slowestFailureMs.get()).as("failures are bounded by the command timeout").isLessThan(2000);

			// The timer fires on time again: a dispatcher woken only by its block
			// timeout would start these up to 5 s late.
			List<String> late = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				late.add("after-" + i);
				scheduler.schedule(QUEUE, new JobRuns.Job("after-" + i), Duration.ofMillis(700 + 100L * i));
			}
			await().atMost(Duration.ofSeconds(10))
				.until(() -> late.stream().allMatch((name) -> handlers.runs(name) == 1));
			List<Long> lateness = late.stream().map(handlers::latenessMillis).toList();
			System.out.println("restart lateness_after_ms=" + lateness);
			assertThat(lateness).allSatisfy((millis) -> assertThat(millis).isBetween(0L, 1000L));
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(StoreInvariantChecks
					.violations(context.getBean(StringRedisTemplate.class), this.redis.keyPrefix(), QUEUE)).isEmpty());
		});
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}

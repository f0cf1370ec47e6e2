package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A user-supplied handler executor that does not run what it is given at once: one that
 * drops a run (as a {@code DiscardPolicy} does) does not keep its task leased for the
 * life of the instance, since the run is released when its start window ends and the task
 * runs; a synchronous one (as a {@code CallerRunsPolicy} under load) never starts a run
 * whose lease has run out, so no task runs twice.
 */
@WithRedis
class HandlerExecutorPolicyIntegrationTests {

	private static final String DROPPED = "executor-drops";

	private static final String INLINE = "executor-inline";

	private static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();

	private static final Map<String, Long> RAN_AT = new ConcurrentHashMap<>();

	private final TestRedis redis;

	HandlerExecutorPolicyIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void aRunTheExecutorDropsIsReleasedWhenItsStartWindowEndsAndTheTaskRunsOnce() {
		RUNS.clear();
		ShortLeases.runner(this.redis).withUserConfiguration(DroppingExecutor.class).run((context) -> {
			assertThat(context).hasNotFailed();
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			long sent = System.nanoTime();
			TaskId id = scheduler.enqueue(DROPPED, "dropped-once");
			// The first run is dropped; the task is released and claimed again.
			await().atMost(Duration.ofSeconds(20)).until(() -> runs(id) == 1);
			Duration late = Duration.ofNanos(RAN_AT.get(id.value()) - sent);
			// Released within the start window plus one heartbeat, claimed again at once:
			// well before the lease (2 s) plus grace would bring it back.
			assertThat(late).as("how late a dropped run ran").isLessThan(ShortLeases.LEASE);
			ShortLeases.assertNoFurtherRun(() -> assertThat(runs(id)).isEqualTo(1));
			assertThat(scheduler.find(DROPPED, id)).isEmpty();
		});
	}

	@Test
	void aSynchronousExecutorNeverStartsARunAfterItsStartWindow() {
		RUNS.clear();
		ShortLeases.runner(this.redis, "delayed-tasks.worker.max-claim=2")
			.withUserConfiguration(InlineExecutor.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				// Ready together while the queue is paused, so one claim leases both;
				// the first to run blocks the dispatcher thread for three leases while
				// the
				// other waits to start.
				QueueControl control = context.getBean(QueueControl.class);
				control.pause(INLINE);
				TaskId first = scheduler.enqueue(INLINE, "a");
				TaskId second = scheduler.enqueue(INLINE, "b");
				control.resume(INLINE);
				await().atMost(Duration.ofSeconds(30)).until(() -> runs(first) >= 1 && runs(second) >= 1);
				ShortLeases.assertNoFurtherRun(() -> {
					assertThat(runs(first)).as("runs of %s", first).isEqualTo(1);
					assertThat(runs(second)).as("runs of %s", second).isEqualTo(1);
				});
			});
	}

	private static int runs(TaskId id) {
		AtomicInteger runs = RUNS.get(id.value());
		return (runs != null) ? runs.get() : 0;
	}

	private static void ran(TaskContext context) {
		RAN_AT.putIfAbsent(context.id().value(), System.nanoTime());
		RUNS.computeIfAbsent(context.id().value(), (key) -> new AtomicInteger()).incrementAndGet();
	}

	@Configuration(proxyBeanMethods = false)
	static class DroppingExecutor {

		private final AtomicBoolean dropped = new AtomicBoolean();

		@DelayedTaskHandler(queue = DROPPED)
		void handle(String payload, TaskContext context) {
			ran(context);
		}

		/**
		 * Drops the first run it is given, as a pool with a {@code DiscardPolicy} does
		 * when full, and runs the others on a pool.
		 */
		@Bean(name = DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME, defaultCandidate = false)
		Executor dropsFirst() {
			ExecutorService pool = Executors.newCachedThreadPool();
			return (task) -> {
				if (this.dropped.compareAndSet(false, true)) {
					return;
				}
				pool.execute(task);
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class InlineExecutor {

		private final AtomicBoolean blocked = new AtomicBoolean();

		@DelayedTaskHandler(queue = INLINE, concurrency = "2")
		void handle(String payload, TaskContext context) throws InterruptedException {
			ran(context);
			if (this.blocked.compareAndSet(false, true)) {
				Thread.sleep(ShortLeases.LEASE.multipliedBy(3).toMillis());
			}
		}

		/**
		 * Runs each run on the calling thread, as a caller-runs policy does when full.
		 */
		@Bean(name = DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME, defaultCandidate = false)
		Executor inline() {
			return Runnable::run;
		}

	}

}

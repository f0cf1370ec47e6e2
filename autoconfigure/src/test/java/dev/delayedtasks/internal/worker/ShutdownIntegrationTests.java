package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tasks in flight when a context closes either finish within the shutdown timeout or are
 * released to run on another instance at once; none is lost, and a release does not count
 * a delivery. These contexts let running handlers finish before they are interrupted
 * ({@code interrupt-on-shutdown=false}); the default, interrupting at once, is covered by
 * {@link GracefulShutdownHandOverIntegrationTests}.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class ShutdownIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	ShutdownIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis);
	}

	@Test
	void inFlightShortHandlersFinishWithinTheShutdownTimeoutAndAreCompleted(CapturedOutput output) {
		RunLog log = new RunLog();
		String queue = "shutdown-finish";
		this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			List<TaskId> all = new ArrayList<>();
			for (int round = 0; round < 5; round++) {
				String instance = "a" + round;
				worker(log, queue, instance, "5s").run((worker) -> {
					List<TaskId> ids = new ArrayList<>();
					for (int i = 0; i < 4; i++) {
						ids.add(scheduler.enqueue(queue, new Job(i, 300 + 20L * i)));
					}
					all.addAll(ids);
					await().atMost(WAIT).until(() -> log.on(instance).size() == 4);
					long closing = System.nanoTime();
					worker.close();
					Duration closeTook = Duration.ofNanos(System.nanoTime() - closing);
					// The handlers' 300-360 ms, not the 5 s shutdown timeout.
					assertThat(closeTook).isLessThan(Duration.ofSeconds(4));
					assertThat(log.on(instance)).hasSize(4).allSatisfy((run) -> {
						assertThat(run.isFinished()).isTrue();
						assertThat(run.wasInterrupted()).isFalse();
					});
					// Completed, not left leased: a lost acknowledgement would run the
					// task again elsewhere.
					for (TaskId id : ids) {
						assertThat(scheduler.find(queue, id)).as("task %s after close", id).isEmpty();
					}
				});
			}
			assertThat(log.byId().keySet()).containsExactlyInAnyOrderElementsOf(all);
			assertThat(log.runs()).hasSize(all.size());
			ShortLeases.assertPartitionEmpty(producer.getBean(StringRedisTemplate.class), this.redis, queue);
			// The worker never gave up on recording an outcome it had (the task would
			// then run again after lease + grace, unless the command happened to reach
			// Redis anyway).
			assertThat(output).doesNotContain("Could not record the outcome");
		});
	}

	@Test
	void inFlightLongHandlersAreReleasedAtTheShutdownTimeoutAndRunOnAnotherContextWithoutADelivery() {
		RunLog log = new RunLog();
		String queue = "shutdown-release";
		this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			List<TaskId> ids = new ArrayList<>();
			worker(log, queue, "a", "500ms").run((a) -> {
				for (int i = 0; i < 5; i++) {
					ids.add(scheduler.enqueue(queue, new Job(i, 10_000)));
				}
				// Concurrency 3: three run, two wait.
				await().atMost(WAIT).until(() -> log.on("a").size() == 3);
				long closing = System.nanoTime();
				a.close();
				// The 500 ms shutdown timeout, not the handlers' 10 s.
				assertThat(Duration.ofNanos(System.nanoTime() - closing)).isLessThan(Duration.ofSeconds(4));
			});
			assertThat(log.on("a")).hasSize(3).allSatisfy((run) -> assertThat(run.wasInterrupted()).isTrue());
			for (TaskId id : ids) {
				assertThat(scheduler.find(queue, id)).as("task %s after close", id).hasValueSatisfying((info) -> {
					assertThat(info.state()).isEqualTo(TaskState.READY);
					assertThat(info.deliveries()).isZero();
					assertThat(info.failures()).isZero();
				});
			}
			worker(log, queue, "b", "500ms").withPropertyValues("test.fast=true").run((b) -> {
				await().atMost(WAIT).until(() -> log.on("b").size() == 5);
				// Released at once (ready right after the close, above), not reaped
				// after a lease expiry, which would have counted a second delivery.
				assertThat(log.on("b")).allSatisfy((run) -> {
					assertThat(run.isFinished()).isTrue();
					assertThat(run.context().attempt()).isEqualTo(1);
					assertThat(run.context().deliveryCount()).isEqualTo(1);
				});
				assertThat(log.on("b")).extracting((run) -> run.context().id())
					.containsExactlyInAnyOrderElementsOf(ids);
				ShortLeases.assertNoFurtherRun(() -> assertThat(log.on("b")).hasSize(5));
				ShortLeases.assertPartitionEmpty(b.getBean(StringRedisTemplate.class), this.redis, queue);
			});
		});
	}

	@Test
	void onCloseShortHandlersFinishAndLongOnesAreReleasedSoNoneIsLost() {
		RunLog log = new RunLog();
		String queue = "shutdown-mixed";
		this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			List<TaskId> quick = new ArrayList<>();
			List<TaskId> slow = new ArrayList<>();
			worker(log, queue, "a", "1s").run((a) -> {
				quick.add(scheduler.enqueue(queue, new Job(0, 300)));
				slow.add(scheduler.enqueue(queue, new Job(1, 10_000)));
				quick.add(scheduler.enqueue(queue, new Job(2, 400)));
				await().atMost(WAIT).until(() -> log.on("a").size() == 3);
				a.close();
			});
			for (TaskId id : quick) {
				assertThat(log.of(id)).singleElement().satisfies((run) -> assertThat(run.isFinished()).isTrue());
				assertThat(scheduler.find(queue, id)).isEmpty();
			}
			assertThat(log.of(slow.get(0))).singleElement()
				.satisfies((run) -> assertThat(run.wasInterrupted()).isTrue());
			assertThat(scheduler.find(queue, slow.get(0))).map(TaskInfo::state).hasValue(TaskState.READY);
			worker(log, queue, "b", "1s").withPropertyValues("test.fast=true").run((b) -> {
				await().atMost(WAIT).until(() -> log.on("b").size() == 1);
				ShortLeases.assertNoFurtherRun(() -> assertThat(log.on("b")).hasSize(1));
				assertThat(log.on("b")).singleElement().satisfies((run) -> {
					assertThat(run.context().id()).isEqualTo(slow.get(0));
					assertThat(run.context().deliveryCount()).isEqualTo(1);
				});
				ShortLeases.assertPartitionEmpty(b.getBean(StringRedisTemplate.class), this.redis, queue);
			});
		});
	}

	private ApplicationContextRunner worker(RunLog log, String queue, String instance, String shutdownTimeout) {
		return this.runner.withBean(RunLog.class, () -> log)
			.withUserConfiguration(SlowHandler.class)
			.withPropertyValues("test.queue=" + queue, "test.instance=" + instance,
					"delayed-tasks.worker.shutdown-timeout=" + shutdownTimeout,
					"delayed-tasks.worker.interrupt-on-shutdown=false");
	}

	record Job(int index, long sleepMillis) {
	}

	@Configuration(proxyBeanMethods = false)
	static class SlowHandler {

		private final RunLog log;

		private final String instance;

		private final boolean fast;

		SlowHandler(RunLog log, @Value("${test.instance}") String instance, @Value("${test.fast:false}") boolean fast) {
			this.log = log;
			this.instance = instance;
			this.fast = fast;
		}

		@DelayedTaskHandler(queue = "${test.queue}", concurrency = "3")
		void handle(Job job, TaskContext context) throws InterruptedException {
			Run run = this.log.started(this.instance, context, job);
			try {
				if (!this.fast) {
					Thread.sleep(job.sleepMillis());
				}
				run.finished();
			}
			catch (InterruptedException ex) {
				run.interrupted();
				throw ex;
			}
		}

	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.internal.worker.CrashTestWorker.CrashJob;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A worker JVM stopped with {@code SIGSTOP} for longer than its lease: another worker
 * runs the task, and when the stopped one resumes its completion is rejected as stale, so
 * the task is neither completed twice nor brought back, and nothing in Redis is
 * corrupted.
 */
@WithRedis(privateServer = true)
class StalledWorkerIntegrationTests {

	private static final String QUEUE = "stalled";

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	StalledWorkerIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis);
	}

	@Test
	void completionOfAWorkerStoppedLongerThanItsLeaseIsRejectedAsStale() throws Exception {
		try (ChildWorker child = ChildWorker.start("stalled", this.redis, QUEUE, 1)) {
			this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((producer) -> {
				DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
				RedisQueueStats stats = producer.getBean(RedisQueueStats.class);
				TaskId id = scheduler.enqueue(QUEUE, new CrashJob(1, 1000));
				await().atMost(Duration.ofSeconds(10)).until(() -> child.ids("@@STARTED ").contains(id.value()));
				child.signal("STOP");
				long stoppedAt = System.nanoTime();

				RunLog log = new RunLog();
				CountDownLatch release = new CountDownLatch(1);
				this.runner.withBean(RunLog.class, () -> log)
					.withBean(CountDownLatch.class, () -> release)
					.withUserConfiguration(InTestWorker.class)
					.run((worker) -> {
						await().atMost(ShortLeases.LEASE.plus(ShortLeases.GRACE).plusSeconds(5))
							.until(() -> !log.of(id).isEmpty());
						Run rerun = log.of(id).get(0);
						long takenOverMs = Duration.ofNanos(rerun.startedNanos() - stoppedAt).toMillis();
						System.out.println("stalled worker: taken over after " + takenOverMs + " ms");
						assertThat(rerun.context().deliveryCount()).isEqualTo(2);

						// The stopped worker resumes while the task is someone else's.
						child.signal("CONT");
						await().atMost(Duration.ofSeconds(10)).until(() -> child.ids("@@STALE ").contains(id.value()));
						assertThat(stats.read(QUEUE).counters()).containsEntry("stale", 1L);
						assertThat(scheduler.find(QUEUE, id)).as("still the new owner's")
							.hasValueSatisfying((info) -> assertThat(info.deliveries()).isEqualTo(2));

						release.countDown();
						await().atMost(Duration.ofSeconds(5)).until(() -> scheduler.find(QUEUE, id).isEmpty());
						assertThat(stats.read(QUEUE).counters()).as("completed once, never brought back")
							.containsEntry("done", 1L)
							.containsEntry("claimed", 2L)
							.containsEntry("reaped", 1L)
							.containsEntry("stale", 1L);
						assertThat(log.of(id)).hasSize(1);
						ShortLeases.assertPartitionEmpty(worker.getBean(StringRedisTemplate.class), this.redis, QUEUE);
					});
			});
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class InTestWorker {

		private final RunLog log;

		private final CountDownLatch release;

		InTestWorker(RunLog log, CountDownLatch release) {
			this.log = log;
			this.release = release;
		}

		@DelayedTaskHandler(queue = QUEUE)
		void handle(CrashJob job, TaskContext context) throws InterruptedException {
			Run run = this.log.started("in-test", context, job);
			this.release.await();
			run.finished();
		}

	}

}

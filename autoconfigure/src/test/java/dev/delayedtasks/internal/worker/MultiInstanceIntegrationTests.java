package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two application contexts, like two instances of one application, on one queue and one
 * key prefix.
 */
@WithRedis
class MultiInstanceIntegrationTests {

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	MultiInstanceIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(SharedQueueHandler.class);
	}

	@Test
	void twoInstancesRunEveryTaskOfASharedQueueExactlyOnce() {
		RunLog log = new RunLog();
		ApplicationContextRunner instances = this.runner.withBean(RunLog.class, () -> log)
			.withPropertyValues("test.queue=multi-once");
		instances.withPropertyValues("test.instance=a").run((a) -> {
			instances.withPropertyValues("test.instance=b").run((b) -> {
				DelayedTaskScheduler scheduler = a.getBean(DelayedTaskScheduler.class);
				Random random = new Random(42);
				List<TaskRequest> requests = new ArrayList<>();
				for (int i = 0; i < 200; i++) {
					requests.add(TaskRequest.of("multi-once", new Job(i, 10))
						.delay(Duration.ofMillis(random.nextInt(1001))));
				}
				List<ScheduleResult> results = scheduler.scheduleAll(requests);
				Set<TaskId> ids = results.stream().map(ScheduleResult::id).collect(Collectors.toSet());
				assertThat(ids).hasSize(200);
				await().atMost(Duration.ofSeconds(15)).until(() -> log.byId().size() == 200);
				// A lost acknowledgement shows as a second run once the lease and the
				// reap grace have passed since the last claim.
				ShortLeases.assertNoFurtherRun(() -> assertThat(log.size()).isEqualTo(200));
				Map<TaskId, List<Run>> byId = log.byId();
				assertThat(byId.keySet()).isEqualTo(ids);
				assertThat(byId.values()).allSatisfy((runs) -> assertThat(runs).hasSize(1));
				assertThat(log.runs()).allSatisfy((run) -> {
					assertThat(run.context().startedAt()).isAfterOrEqualTo(run.context().dueAt());
					assertThat(run.context().attempt()).isEqualTo(1);
					assertThat(run.context().deliveryCount()).isEqualTo(1);
				});
				assertThat(log.on("a")).isNotEmpty();
				assertThat(log.on("b")).isNotEmpty();
				System.out.println("multi-once a=" + log.on("a").size() + " b=" + log.on("b").size() + " lateness "
						+ RunLog.describe(log.latenessMillis()));
				await().atMost(Duration.ofSeconds(10)).until(() -> log.finishedCount() == 200);
				ShortLeases.assertPartitionEmpty(a.getBean(StringRedisTemplate.class), this.redis, "multi-once");
			});
		});
	}

	@Test
	void closingTheTimerOwnerHandsTheTimerToTheOtherInstanceAndDueTasksStillFire() {
		RunLog log = new RunLog();
		ApplicationContextRunner instances = this.runner.withBean(RunLog.class, () -> log)
			.withPropertyValues("test.queue=multi-handover", "delayed-tasks.worker.block-timeout=5s");
		instances.withPropertyValues("test.instance=a").run((a) -> {
			HandlerContainer handlerA = onlyHandler(a);
			await().atMost(Duration.ofSeconds(10)).until(handlerA::isTimerOwner);
			instances.withPropertyValues("test.instance=b").run((b) -> {
				HandlerContainer handlerB = onlyHandler(b);
				// Past a contender's retry (at most a timer TTL): b leaves the timer to
				// a.
				await().during(ShortLeases.TIMER_TTL.plusMillis(500))
					.atMost(Duration.ofSeconds(10))
					.until(() -> !handlerB.isTimerOwner() && handlerA.isTimerOwner());
				DelayedTaskScheduler scheduler = b.getBean(DelayedTaskScheduler.class);
				List<TaskId> early = new ArrayList<>();
				for (int i = 0; i < 5; i++) {
					early.add(scheduler.schedule("multi-handover", new Job(i, 0), Duration.ofMillis(300 + 50L * i)));
				}
				await().atMost(Duration.ofSeconds(10)).until(() -> log.size() == 5);
				List<TaskId> late = new ArrayList<>();
				for (int i = 0; i < 10; i++) {
					late.add(scheduler.schedule("multi-handover", new Job(100 + i, 0),
							Duration.ofMillis(2500 + 100L * i)));
				}
				long closing = System.nanoTime();
				a.close();
				assertThat(handlerA.isTimerOwner()).isFalse();
				await().atMost(Duration.ofSeconds(10)).until(handlerB::isTimerOwner);
				System.out
					.println("multi-handover takeover_ms=" + Duration.ofNanos(System.nanoTime() - closing).toMillis());
				await().atMost(Duration.ofSeconds(15)).until(() -> log.size() == 15);
				List<Run> lateRuns = late.stream().flatMap((id) -> log.of(id).stream()).toList();
				assertThat(lateRuns).hasSize(10).allSatisfy((run) -> {
					assertThat(run.instance()).isEqualTo("b");
					assertThat(run.context().startedAt()).isAfterOrEqualTo(run.context().dueAt());
				});
				List<Long> lateness = lateRuns.stream()
					.map((run) -> Duration.between(run.context().dueAt(), run.context().startedAt()).toMillis())
					.sorted()
					.toList();
				System.out.println("multi-handover lateness after takeover " + RunLog.describe(lateness));
				// The new owner arms its own timer: tasks fire on time, not on the next
				// dispatcher block (5 s here).
				assertThat(lateness.get(lateness.size() - 1)).isLessThan(1000);
				ShortLeases.assertNoFurtherRun(() -> assertThat(log.size()).isEqualTo(15));
				ShortLeases.assertPartitionEmpty(b.getBean(StringRedisTemplate.class), this.redis, "multi-handover");
			});
		});
	}

	private static HandlerContainer onlyHandler(ApplicationContext context) {
		return context.getBean(DelayedTaskHandlerRegistry.class).getHandlers().iterator().next();
	}

	record Job(int index, long sleepMillis) {
	}

	@Configuration(proxyBeanMethods = false)
	static class SharedQueueHandler {

		private final RunLog log;

		private final String instance;

		SharedQueueHandler(RunLog log, @Value("${test.instance}") String instance) {
			this.log = log;
			this.instance = instance;
		}

		@DelayedTaskHandler(queue = "${test.queue}", concurrency = "4")
		void handle(Job job, TaskContext context) throws InterruptedException {
			Run run = this.log.started(this.instance, context, job);
			Thread.sleep(job.sleepMillis());
			run.finished();
		}

	}

}

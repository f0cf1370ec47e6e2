package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * More tasks fall due at one instant than one script call promotes (500) or one claim
 * leases ({@code max-claim}, 32): all of them become ready at their due time, not a batch
 * per timer re-arm, and each runs once.
 */
@WithRedis
class ManyDueTasksIntegrationTests {

	private static final String QUEUE = "many-due";

	/** More than two promote batches of 500. */
	private static final int TASKS = 1_200;

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	ManyDueTasksIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(GatedHandler.class);
	}

	@Test
	void moreDueTasksThanOnePromoteOrClaimBatchAllBecomeReadyAtTheirDueTimeAndRunOnce() {
		RunLog log = new RunLog();
		this.runner.withBean(RunLog.class, () -> log).run((context) -> {
			GatedHandler handler = context.getBean(GatedHandler.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), QUEUE);
			HandlerContainer container = context.getBean(DelayedTaskHandlerRegistry.class)
				.getHandlers()
				.iterator()
				.next();
			await().atMost(Duration.ofSeconds(5)).until(container::isTimerOwner);
			Instant due = Instant.now().plusMillis(1500);
			List<TaskRequest> requests = new ArrayList<>(TASKS);
			for (int i = 0; i < TASKS; i++) {
				requests.add(TaskRequest.of(QUEUE, "task " + i).at(due));
			}
			List<TaskId> ids = context.getBean(DelayedTaskScheduler.class)
				.scheduleAll(requests)
				.stream()
				.map((result) -> result.id())
				.toList();
			assertThat(redis.opsForZSet().zCard(keys.sched())).as("scheduled before the due time").isEqualTo(TASKS);
			// The handlers hold the first tasks they get, so at most one claim runs
			// before the gate opens: promotion has to move all the others to ready.
			await().atMost(Duration.between(Instant.now(), due).plusSeconds(5))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> redis.opsForZSet().zCard(keys.sched()) == 0);
			long promotedAfterDueMs = Duration.between(due, Instant.now()).toMillis();
			System.out
				.println("many-due: " + TASKS + " tasks promoted " + promotedAfterDueMs + " ms after their due time");
			assertThat(promotedAfterDueMs).as("all promoted, ms after the due time").isLessThan(1000);
			handler.gate.countDown();
			await().atMost(Duration.ofSeconds(20)).until(() -> log.size() >= TASKS);
			Map<TaskId, List<Run>> byId = log.byId();
			assertThat(byId.keySet()).containsExactlyInAnyOrderElementsOf(ids);
			assertThat(byId.values()).allSatisfy((runs) -> assertThat(runs).hasSize(1));
			assertThat(log.runs()).allSatisfy((run) -> {
				assertThat(run.context().startedAt()).isAfterOrEqualTo(run.context().dueAt());
				assertThat(run.context().deliveryCount()).isEqualTo(1);
			});
			await().atMost(Duration.ofSeconds(5)).until(() -> log.finishedCount() == TASKS);
			ShortLeases.assertPartitionEmpty(redis, this.redis, QUEUE);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class GatedHandler {

		final CountDownLatch gate = new CountDownLatch(1);

		private final RunLog log;

		GatedHandler(RunLog log) {
			this.log = log;
		}

		@DelayedTaskHandler(queue = QUEUE, concurrency = "8")
		void handle(String payload, TaskContext context) throws InterruptedException {
			Run run = this.log.started("only", context, payload);
			this.gate.await(30, TimeUnit.SECONDS);
			run.finished();
		}

	}

}

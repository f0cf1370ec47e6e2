package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.Concurrency;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.FlowHandler;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.Job;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A task's {@link TaskRequest#cost(int) cost} counts that many starts against the queue's
 * rate limit and its rate key's (docs/flow-control.md, "Weighted cost"): the windows hold
 * at most their count of units, a cost above a count counts as the count, and a bad cost
 * fails at {@code schedule}.
 */
@WithRedis
class TaskCostIntegrationTests {

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	TaskCostIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(FlowHandler.class);
	}

	@ParameterizedTest(name = "{0}={1}, cost {2}: {3} a second")
	@CsvSource(delimiter = '|', textBlock = """
			rate-limit     | 10/1s | 5  | 2
			key-rate-limit | 4/1s  | 2  | 2
			key-rate-limit | 4/1s  | 10 | 1
			""")
	void aTaskCountsItsCostAgainstTheRateLimit(String property, String limit, int cost, int perSecond) {
		String queue = "cost-" + property + "-" + cost;
		int tasks = 3 * perSecond + 1;
		RunLog log = new RunLog();
		this.runner.withBean(RunLog.class, () -> log)
			.withBean(Concurrency.class, () -> new Concurrency(false))
			.withPropertyValues("test.queue=" + queue, "test.instance=a", "test.concurrency=8",
					"delayed-tasks.queues." + queue + "." + property + "=" + limit)
			.run((context) -> {
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
				await().atMost(Duration.ofSeconds(5)).until(() -> template.opsForHash().get(keys.meta(), "fl") != null);
				List<TaskRequest> requests = new ArrayList<>();
				for (int i = 0; i < tasks; i++) {
					requests.add(TaskRequest.of(queue, new Job(i)).rateKey("customer-1").cost(cost));
				}
				Set<TaskId> ids = context.getBean(DelayedTaskScheduler.class)
					.scheduleAll(requests)
					.stream()
					.map(ScheduleResult::id)
					.collect(Collectors.toSet());
				await().atMost(Duration.ofSeconds(15)).until(() -> log.finishedCount() == tasks);
				List<Run> runs = log.runs();
				FlowControlIntegrationTests.assertOncePerTask(runs, ids);
				List<Long> leasedAt = runs.stream()
					.map((run) -> run.context().startedAt().toEpochMilli())
					.sorted()
					.toList();
				FlowControlIntegrationTests.assertNoWindowHoldsMore(leasedAt, perSecond, 1000, "leases (ms)");
				// Used: the last lease comes 3 windows after the first, not much later.
				long span = leasedAt.get(leasedAt.size() - 1) - leasedAt.get(0);
				assertThat(span).as("ms from the first lease to the last").isBetween(3000L, 4500L);
				ShortLeases.assertPartitionEmpty(template, this.redis, queue);
			});
	}

	@Test
	void aLargeWindowTakesManyCostlyLeasesInOneClaim() {
		// 8 leases of cost 1,000 in one claim are 8,000 window entries: more than one
		// ZADD
		// can take from Lua's unpack, so the entries go in bounded chunks.
		String queue = "cost-large-window";
		RunLog log = new RunLog();
		this.runner.withBean(RunLog.class, () -> log)
			.withBean(Concurrency.class, () -> new Concurrency(false))
			.withPropertyValues("test.queue=" + queue, "test.instance=a", "test.concurrency=8",
					"delayed-tasks.queues." + queue + ".rate-limit=10000/24h",
					"delayed-tasks.queues." + queue + ".key-rate-limit=10000/24h")
			.run((context) -> {
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
				await().atMost(Duration.ofSeconds(5)).until(() -> template.opsForHash().get(keys.meta(), "fl") != null);
				List<TaskRequest> requests = new ArrayList<>();
				for (int i = 0; i < 12; i++) {
					requests.add(TaskRequest.of(queue, new Job(i)).rateKey("k-" + (i % 2)).cost(1000));
				}
				context.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
				await().atMost(Duration.ofSeconds(10)).until(() -> log.finishedCount() == 10);
				Thread.sleep(300);
				assertThat(log.finishedCount()).as("tasks run: the window holds 10 of cost 1,000").isEqualTo(10);
				assertThat(template.opsForZSet().zCard(keys.base() + "starts")).isEqualTo(10_000L);
				assertThat(template.opsForZSet().zCard(keys.base() + "ks:k-0")).isEqualTo(5_000L);
				assertThat(template.opsForList().size(keys.ready())).isEqualTo(2L);
			});
	}

	@Test
	void aCostOutOfRangeFailsAtSchedule() {
		String queue = "cost-bad";
		this.runner.withBean(RunLog.class, RunLog::new)
			.withBean(Concurrency.class, () -> new Concurrency(false))
			.withPropertyValues("test.queue=" + queue, "test.instance=a")
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				for (int bad : new int[] { 0, -1, 1001 }) {
					assertThatExceptionOfType(InvalidTaskRequestException.class)
						.isThrownBy(() -> scheduler.schedule(TaskRequest.of(queue, new Job(0)).cost(bad)))
						.withMessageContaining("cost " + bad + " for queue '" + queue + "' is invalid: use 1 to 1000");
				}
			});
	}

}

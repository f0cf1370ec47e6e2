package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.annotation.DelayedTaskHandler;
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
 * Worker JVMs killed with SIGKILL in the middle of their handlers, one after another,
 * while a worker in the test JVM keeps working: every task completes, only the tasks that
 * were in flight at a kill run twice, and each of those is taken back within lease +
 * grace.
 */
@WithRedis(privateServer = true)
class WorkerCrashIntegrationTests {

	private static final String QUEUE = "crash";

	private static final int ROUNDS = 3;

	private static final int TASKS_PER_ROUND = 12;

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	WorkerCrashIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis);
	}

	@Test
	void workersKilledOneAfterAnotherLoseNothingAndOnlyTheirTasksInFlightRunTwice() throws Exception {
		RunLog log = new RunLog();
		this.runner.withBean(RunLog.class, () -> log).withUserConfiguration(InTestWorker.class).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			List<TaskId> all = new ArrayList<>();
			Map<String, Long> killedAtById = new HashMap<>();
			Map<String, Integer> childRuns = new HashMap<>();
			Set<String> childCompleted = new HashSet<>();
			List<Long> recoveryMillis = new ArrayList<>();
			for (int round = 0; round < ROUNDS; round++) {
				try (ChildWorker child = ChildWorker.start("child-" + round, this.redis, QUEUE, 4)) {
					List<TaskId> tasks = new ArrayList<>();
					for (int i = 0; i < TASKS_PER_ROUND; i++) {
						// The child sleeps a minute on each; the test's worker is quick.
						tasks.add(scheduler.enqueue(QUEUE, new CrashJob(round * 100 + i, 60_000)));
					}
					all.addAll(tasks);
					// Every task of the round either completed here or runs in the child.
					await().atMost(Duration.ofSeconds(20)).until(() -> {
						Set<String> settled = new HashSet<>(child.inFlight());
						log.runs().stream().filter(Run::isFinished).forEach((run) -> settled.add(id(run)));
						return !child.inFlight().isEmpty() && settled.containsAll(values(tasks));
					});
					Set<String> inFlight = child.inFlight();
					for (String id : inFlight) {
						assertThat(scheduler.find(QUEUE, TaskId.of(id))).map(TaskInfo::state)
							.hasValue(TaskState.ACTIVE);
					}
					long killedAt = System.nanoTime();
					child.kill();
					inFlight.forEach((id) -> killedAtById.put(id, killedAt));
					child.ids("@@STARTED ").forEach((id) -> childRuns.merge(id, 1, Integer::sum));
					childCompleted.addAll(child.ids("@@DONE "));
					await().atMost(Duration.ofSeconds(10))
						.until(() -> inFlight.stream().allMatch((id) -> finished(log, id)));
					for (String id : inFlight) {
						Run rerun = log.of(TaskId.of(id)).get(0);
						assertThat(rerun.context().deliveryCount()).as("deliveries of %s", id).isEqualTo(2);
						Duration recovered = Duration.ofNanos(rerun.startedNanos() - killedAt);
						recoveryMillis.add(recovered.toMillis());
						// Not before the lease (extended by heartbeats until the
						// kill) ran out, and taken back within lease + grace.
						assertThat(recovered).as("recovery of %s", id)
							.isBetween(ShortLeases.LEASE.minus(ShortLeases.LEASE.dividedBy(3))
								.plus(ShortLeases.GRACE)
								.minusMillis(200), ShortLeases.LEASE.plus(ShortLeases.GRACE).plusSeconds(1));
					}
				}
			}
			System.out.println("crash rounds=" + ROUNDS + " killed_in_flight=" + killedAtById.size() + " recovery_ms="
					+ recoveryMillis.stream().sorted().toList());
			assertThat(killedAtById).as("tasks in flight at the kills").hasSizeGreaterThanOrEqualTo(ROUNDS);
			for (TaskId id : all) {
				int runsHere = log.of(id).size();
				int completions = (childCompleted.contains(id.value()) ? 1 : 0)
						+ (int) log.of(id).stream().filter(Run::isFinished).count();
				assertThat(completions).as("completions of %s", id).isEqualTo(1);
				int runs = runsHere + childRuns.getOrDefault(id.value(), 0);
				assertThat(runs).as("runs of %s", id).isEqualTo(killedAtById.containsKey(id.value()) ? 2 : 1);
			}
			ShortLeases.assertPartitionEmpty(context.getBean(StringRedisTemplate.class), this.redis, QUEUE);
		});
	}

	private static boolean finished(RunLog log, String id) {
		return log.of(TaskId.of(id)).stream().anyMatch(Run::isFinished);
	}

	private static String id(Run run) {
		return run.context().id().value();
	}

	private static List<String> values(List<TaskId> ids) {
		return ids.stream().map(TaskId::value).toList();
	}

	@Configuration(proxyBeanMethods = false)
	static class InTestWorker {

		private final RunLog log;

		InTestWorker(RunLog log) {
			this.log = log;
		}

		/** Slower than the child at claiming, so that the child gets its share. */
		@DelayedTaskHandler(queue = QUEUE, concurrency = "1")
		void handle(CrashJob job, TaskContext context) throws InterruptedException {
			Run run = this.log.started("in-test", context, job);
			Thread.sleep(100);
			run.finished();
		}

	}

}

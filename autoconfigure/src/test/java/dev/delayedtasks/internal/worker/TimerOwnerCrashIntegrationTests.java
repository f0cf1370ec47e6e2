package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The process that owns a queue's timer is killed with SIGKILL: the other instance takes
 * the timer over within its TTL, and tasks due after the kill start on time.
 */
@WithRedis(privateServer = true)
class TimerOwnerCrashIntegrationTests {

	private static final String QUEUE = "timer-crash";

	private static final int TASKS = 6;

	/**
	 * Beyond the timer TTL: the contender's retry, the script that takes the lease and
	 * this test's own polling, on a loaded machine.
	 */
	private static final Duration TAKEOVER_MARGIN = Duration.ofMillis(500);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	TimerOwnerCrashIntegrationTests(TestRedis redis) {
		this.redis = redis;
		// A dispatcher blocks 5 s: a task started on a block timeout instead of by the
		// new owner's timer would be seconds late.
		this.runner = ShortLeases.runner(redis, "delayed-tasks.worker.block-timeout=5s");
	}

	@Test
	void anotherInstanceTakesTheTimerOverAndDueTasksStartOnTime() throws Exception {
		try (ChildWorker child = ChildWorker.start("timer-owner", this.redis, QUEUE, 1)) {
			RunLog log = new RunLog();
			this.runner.withBean(RunLog.class, () -> log).withUserConfiguration(InTestWorker.class).run((context) -> {
				RedisQueueStats stats = context.getBean(RedisQueueStats.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> stats.read(QUEUE).timerOwner() != null);
				String childOwner = stats.read(QUEUE).timerOwner();
				// The in-test instance started second and waits for the timer.
				Thread.sleep(ShortLeases.TIMER_TTL.toMillis());
				assertThat(stats.read(QUEUE).timerOwner()).isEqualTo(childOwner);

				List<TaskId> tasks = new ArrayList<>();
				for (int i = 0; i < TASKS; i++) {
					// Due after the kill and after the takeover can have happened.
					tasks.add(scheduler.schedule(QUEUE, new CrashJob(i, 0), Duration.ofMillis(2500 + 250L * i)));
				}
				long killedAt = System.nanoTime();
				child.kill();
				await().atMost(ShortLeases.TIMER_TTL.plusSeconds(3))
					.pollInterval(Duration.ofMillis(20))
					.until(() -> stats.read(QUEUE).timerOwner() != null
							&& !childOwner.equals(stats.read(QUEUE).timerOwner()));
				long takeoverMs = Duration.ofNanos(System.nanoTime() - killedAt).toMillis();
				// The killed owner renewed its lease at most one TTL before the kill,
				// and a contender retries when the lease's remaining TTL runs out.
				assertThat(takeoverMs).as("takeover after the kill (timer-ttl %s)", ShortLeases.TIMER_TTL)
					.isLessThanOrEqualTo(ShortLeases.TIMER_TTL.plus(TAKEOVER_MARGIN).toMillis());
				await().atMost(Duration.ofSeconds(20))
					.until(() -> tasks.stream().allMatch((id) -> log.of(id).stream().anyMatch(Run::isFinished)));
				List<Long> lateness = tasks.stream()
					.map((id) -> log.of(id).get(0).context())
					.map((task) -> Duration.between(task.dueAt(), task.startedAt()).toMillis())
					.toList();
				System.out.println("timer takeover_ms<=" + takeoverMs + " lateness_ms=" + lateness);
				assertThat(child.ids("@@STARTED ")).as("the killed owner ran none of them").isEmpty();
				// A dispatcher that only woke up on its block timeout would start them up
				// to 5 s late.
				assertThat(lateness).allSatisfy((late) -> assertThat(late).isBetween(0L, 1000L));
				for (TaskId id : tasks) {
					assertThat(log.of(id)).hasSize(1);
				}
			});
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class InTestWorker {

		private final RunLog log;

		InTestWorker(RunLog log) {
			this.log = log;
		}

		@DelayedTaskHandler(queue = QUEUE, concurrency = "2")
		void handle(CrashJob job, TaskContext context) {
			this.log.started("in-test", context, job).finished();
		}

	}

}

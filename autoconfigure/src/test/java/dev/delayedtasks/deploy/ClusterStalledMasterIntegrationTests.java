package dev.delayedtasks.deploy;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.test.RedisCluster;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.cluster.SlotHash;
import org.assertj.core.api.SoftAssertions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A hung master of a Redis Cluster (its process stopped with {@code SIGSTOP}, as a
 * partition or a frozen VM would leave it) holds up only the queue whose partition it
 * serves: the queue on a healthy master keeps its leases extended, so its long tasks run
 * once, and its delayed tasks start on time, while every call to the stopped master hangs
 * for longer than a lease. The stopped queue's running task loses its lease locally when
 * that lease runs out, not when a call to its master returns.
 */
@WithRedis(cluster = true)
class ClusterStalledMasterIntegrationTests {

	/** A queue whose partition {@code {paused:0}} lives on the third master. */
	private static final String STALLED = "paused";

	/** A queue whose partition {@code {healthy:0}} lives on the second master. */
	private static final String HEALTHY = "healthy";

	private static final Duration LEASE = Duration.ofSeconds(2);

	private static final Duration GRACE = Duration.ofMillis(500);

	/**
	 * Longer than a lease, so that a call to the stopped master hangs past the leases of
	 * every queue whose lease extension waits for it.
	 */
	private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);

	/** Less than {@link #COMMAND_TIMEOUT}: the hung calls return when the master does. */
	private static final Duration STOPPED_FOR = Duration.ofSeconds(8);

	/**
	 * The cluster's node timeout while the master is stopped. The test cluster's 1 s
	 * would have the other masters mark it failed and answer {@code CLUSTERDOWN} for the
	 * healthy queue too; this test is about a hang, not about a failover (there are no
	 * replicas to fail over to anyway).
	 */
	private static final Duration NODE_TIMEOUT_WHILE_STOPPED = Duration.ofSeconds(30);

	/** Longer than a lease: these runs last only if their leases are extended. */
	private static final Duration LONG_RUN = Duration.ofMillis(3500);

	private static final int LONG_TASKS = 2;

	private static final int DELAYED_TASKS = 10;

	private static final Duration FIRST_DUE = Duration.ofSeconds(1);

	private static final Duration DUE_EVERY = Duration.ofMillis(200);

	/**
	 * Generous for a loaded two-core machine; the timer itself is not this late. A timer
	 * held up by the stalled master would leave these tasks to the dispatcher's claims,
	 * seconds late with its {@link #BLOCK_TIMEOUT}.
	 */
	private static final Duration MAX_LATENESS = Duration.ofSeconds(1);

	private static final Duration BLOCK_TIMEOUT = Duration.ofSeconds(5);

	/**
	 * When the stalled queue's running task must have been told it lost its lease: its
	 * last extension is at most a heartbeat interval before the stop and its local lease
	 * is a little shorter than the lease, so a check that does not wait for the hung
	 * extension stops it by about 2.5 s; a check that does waits for the master to come
	 * back ({@link #STOPPED_FOR}).
	 */
	private static final Duration LOCAL_LEASE_LOSS_WITHIN = LEASE.plus(GRACE).plusSeconds(1);

	private static final Duration WAIT = Duration.ofSeconds(20);

	private final RedisCluster cluster;

	private final ApplicationContextRunner runner;

	ClusterStalledMasterIntegrationTests(TestRedis redis) {
		this.cluster = redis.cluster();
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.cluster.nodes=" + this.cluster.nodesProperty(),
					"spring.data.redis.lettuce.cluster.refresh.period=5s",
					"spring.data.redis.timeout=" + COMMAND_TIMEOUT.toMillis() + "ms",
					"delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=" + LEASE.toMillis() + "ms",
					"delayed-tasks.worker.reap-grace=" + GRACE.toMillis() + "ms", "delayed-tasks.worker.timer-ttl=1s",
					"delayed-tasks.worker.shutdown-timeout=1s",
					"delayed-tasks.worker.block-timeout=" + BLOCK_TIMEOUT.toMillis() + "ms",
					"delayed-tasks.retry.delay=100ms", "delayed-tasks.retry.jitter=0ms")
			.withBean(StallHandlers.class, StallHandlers::new);
	}

	@Test
	void aStoppedMasterDelaysNeitherTheLeasesNorTheTimerOfAQueueOnAnotherMaster() throws Exception {
		long testStarted = System.nanoTime();
		RedisProcess stalledMaster = this.cluster.masterOf(SlotHash.getSlot("{" + STALLED + ":0}"));
		RedisProcess healthyMaster = this.cluster.masterOf(SlotHash.getSlot("{" + HEALTHY + ":0}"));
		assertThat(stalledMaster.port()).as("masters of '%s' and '%s'", STALLED, HEALTHY)
			.isNotEqualTo(healthyMaster.port());
		this.runner.run((context) -> {
			StallHandlers handlers = context.getBean(StallHandlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			// Both queues registered, their dispatchers, timers and connections up.
			TaskId stalledWarmUp = scheduler.enqueue(STALLED, new Work("warm-up", 0));
			TaskId healthyWarmUp = scheduler.enqueue(HEALTHY, new Work("warm-up", 0));
			await().atMost(WAIT)
				.until(() -> handlers.finished(stalledWarmUp) == 1 && handlers.finished(healthyWarmUp) == 1);
			// The stalled queue's heartbeat and timer have work on its master: a running
			// task to extend and delayed tasks falling due while it is stopped.
			TaskId stalledLong = scheduler.enqueue(STALLED, new Work("stalled-long", 15_000));
			await().atMost(WAIT).until(() -> handlers.runs(stalledLong).size() == 1);
			List<TaskId> stalledDelayed = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				stalledDelayed.add(scheduler.schedule(STALLED, new Work("stalled-delayed-" + i, 0),
						Duration.ofMillis(1000 + 400L * i)));
			}
			List<TaskId> healthyLong = new ArrayList<>();
			List<TaskId> healthyDelayed = new ArrayList<>();
			Map<Integer, String> nodeTimeouts = nodeTimeouts();
			long stoppedAt;
			try {
				setNodeTimeouts(NODE_TIMEOUT_WHILE_STOPPED.toMillis());
				signal("STOP", stalledMaster);
				stoppedAt = System.nanoTime();
				for (int i = 0; i < LONG_TASKS; i++) {
					healthyLong.add(scheduler.enqueue(HEALTHY, new Work("healthy-long-" + i, LONG_RUN.toMillis())));
				}
				for (int i = 0; i < DELAYED_TASKS; i++) {
					healthyDelayed.add(scheduler.schedule(HEALTHY, new Work("healthy-delayed-" + i, 0),
							FIRST_DUE.plus(DUE_EVERY.multipliedBy(i))));
				}
				long remaining = STOPPED_FOR.toNanos() - (System.nanoTime() - stoppedAt);
				if (remaining > 0) {
					TimeUnit.NANOSECONDS.sleep(remaining);
				}
			}
			finally {
				signal("CONT", stalledMaster);
				nodeTimeouts.forEach((port, timeout) -> ClusterIntegrationTests.admin(port,
						(commands) -> commands.configSet("cluster-node-timeout", timeout)));
				this.cluster.awaitHealthy();
			}
			long resumedAt = System.nanoTime();
			List<TaskId> all = new ArrayList<>(healthyLong);
			all.addAll(healthyDelayed);
			all.add(stalledLong);
			all.addAll(stalledDelayed);
			// Every task completed (nothing lost), and no run of any is still going or
			// about to be recorded.
			await().atMost(WAIT).untilAsserted(() -> {
				for (TaskId id : all) {
					String queue = (healthyLong.contains(id) || healthyDelayed.contains(id)) ? HEALTHY : STALLED;
					assertThat(scheduler.find(queue, id)).as("task %s of '%s' in Redis", id, queue).isEmpty();
					assertThat(handlers.runs(id)).as("runs of %s", id).isNotEmpty().allMatch(Run::isFinished);
					assertThat(handlers.succeeded(id)).as("recorded completions of %s", id).isNotEmpty();
				}
			});
			Map<String, Integer> healthyRunCounts = new LinkedHashMap<>();
			healthyLong.forEach((id) -> healthyRunCounts.put(handlers.name(id), handlers.runs(id).size()));
			healthyDelayed.forEach((id) -> healthyRunCounts.put(handlers.name(id), handlers.runs(id).size()));
			List<Long> lateness = healthyDelayed.stream()
				.flatMap((id) -> handlers.runs(id).stream())
				.map((run) -> Duration.between(run.context().dueAt(), run.context().startedAt()).toMillis())
				.toList();
			Run stalledRun = handlers.runs(stalledLong).get(0);
			Long lostLeaseAfterMillis = (stalledRun.interruptedAt() != null)
					? TimeUnit.NANOSECONDS.toMillis(stalledRun.interruptedAt() - stoppedAt) : null;
			System.out.println("cluster stalled master: master " + stalledMaster.port() + " of '" + STALLED
					+ "' stopped for " + TimeUnit.NANOSECONDS.toMillis(resumedAt - stoppedAt) + " ms; '" + HEALTHY
					+ "' on master " + healthyMaster.port() + ": delayed lateness_ms=" + lateness + " runs_per_task="
					+ healthyRunCounts + " stale_acks=" + handlers.staleAcks(HEALTHY) + " long_runs="
					+ healthyLong.stream().flatMap((id) -> handlers.runs(id).stream()).map(Run::describe).toList()
					+ "; '" + STALLED + "' running task interrupted after " + lostLeaseAfterMillis + " ms, its runs "
					+ handlers.runs(stalledLong).stream().map(Run::describe).toList() + "; test took "
					+ TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - testStarted) + " ms");
			SoftAssertions softly = new SoftAssertions();
			for (TaskId id : healthyLong) {
				softly.assertThat(handlers.runs(id))
					.as("runs of %s (%s ms, longer than the lease) on '%s' while the master of '%s' was stopped",
							handlers.name(id), LONG_RUN.toMillis(), HEALTHY, STALLED)
					.hasSize(1)
					.noneMatch((run) -> run.interruptedAt() != null, "interrupted (lease lost)");
				// The one run's own completion was recorded, under its own lease token.
				softly.assertThat(handlers.succeeded(id))
					.as("lease tokens of the recorded completions of %s", handlers.name(id))
					.containsExactlyElementsOf(
							handlers.runs(id).stream().map((run) -> run.context().leaseToken()).toList());
			}
			softly.assertThat(handlers.staleAcks(HEALTHY))
				.as("completions on '%s' rejected because another run had taken the task over", HEALTHY)
				.isEmpty();
			for (TaskId id : healthyDelayed) {
				softly.assertThat(handlers.runs(id)).as("runs of %s on '%s'", handlers.name(id), HEALTHY).hasSize(1);
			}
			softly.assertThat(lateness)
				.as("lateness (ms) of the delayed tasks of '%s' due while the master of '%s' was stopped", HEALTHY,
						STALLED)
				.hasSize(DELAYED_TASKS)
				.allMatch((millis) -> millis < MAX_LATENESS.toMillis(), "under " + MAX_LATENESS.toMillis() + " ms");
			softly.assertThat(lostLeaseAfterMillis)
				.as("ms after its master stopped until the running task of '%s' was told it lost its lease", STALLED)
				.isNotNull()
				.isLessThan(LOCAL_LEASE_LOSS_WITHIN.toMillis());
			softly.assertAll();
		});
	}

	private Map<Integer, String> nodeTimeouts() {
		Map<Integer, String> timeouts = new LinkedHashMap<>();
		for (RedisProcess node : this.cluster.processes()) {
			timeouts.put(node.port(), ClusterIntegrationTests.admin(node.port(),
					(commands) -> commands.configGet("cluster-node-timeout").get("cluster-node-timeout")));
		}
		return timeouts;
	}

	private void setNodeTimeouts(long millis) {
		for (RedisProcess node : this.cluster.processes()) {
			ClusterIntegrationTests.admin(node.port(),
					(commands) -> commands.configSet("cluster-node-timeout", Long.toString(millis)));
		}
	}

	private static void signal(String signal, RedisProcess node) throws IOException, InterruptedException {
		String pid = Long.toString(node.process().pid());
		Process kill = new ProcessBuilder("kill", "-" + signal, pid).inheritIO().start();
		assertThat(kill.waitFor(5, TimeUnit.SECONDS)).isTrue();
		assertThat(kill.exitValue()).as("kill -" + signal + " " + pid).isZero();
	}

	/**
	 * A task's name and how long its first delivery runs.
	 *
	 * @param name the name, for the report
	 * @param millis how long the first delivery sleeps; a redelivery returns at once so
	 * that the test does not wait for a second long run
	 */
	record Work(String name, long millis) {
	}

	/**
	 * One run of a handler, with local monotonic times.
	 */
	static final class Run {

		private final Work work;

		private final TaskContext context;

		private final long startedAt;

		private volatile @Nullable Long interruptedAt;

		private volatile @Nullable Long endedAt;

		Run(Work work, TaskContext context, long startedAt) {
			this.work = work;
			this.context = context;
			this.startedAt = startedAt;
		}

		TaskContext context() {
			return this.context;
		}

		@Nullable Long interruptedAt() {
			return this.interruptedAt;
		}

		boolean isFinished() {
			return this.endedAt != null;
		}

		@Override
		public String toString() {
			return describe();
		}

		String describe() {
			Long ended = this.endedAt;
			return this.work.name() + "#" + this.context.deliveryCount() + "("
					+ ((ended != null) ? TimeUnit.NANOSECONDS.toMillis(ended - this.startedAt) + " ms" : "running")
					+ ((this.interruptedAt != null) ? ", interrupted" : "") + ")";
		}

	}

	/**
	 * The handlers of both queues, recording every run and every completion that was
	 * rejected as stale.
	 */
	static class StallHandlers implements DelayedTaskListener {

		private final List<Run> runs = new CopyOnWriteArrayList<>();

		private final List<TaskContext> staleAcks = new CopyOnWriteArrayList<>();

		private final List<TaskContext> succeeded = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = STALLED, concurrency = "8")
		void stalled(Work work, TaskContext context) {
			run(work, context);
		}

		@DelayedTaskHandler(queue = HEALTHY, concurrency = "8")
		void healthy(Work work, TaskContext context) {
			run(work, context);
		}

		private void run(Work work, TaskContext context) {
			Run run = new Run(work, context, System.nanoTime());
			this.runs.add(run);
			try {
				Thread.sleep((context.deliveryCount() == 1) ? work.millis() : 0);
			}
			catch (InterruptedException ex) {
				// The worker stopped the run (lease lost): remember when; the worker
				// decides what becomes of the outcome.
				run.interruptedAt = System.nanoTime();
			}
			finally {
				run.endedAt = System.nanoTime();
			}
		}

		@Override
		public void succeeded(TaskContext context, Duration runTime) {
			this.succeeded.add(context);
		}

		@Override
		public void staleAcknowledgement(TaskContext context) {
			this.staleAcks.add(context);
		}

		/**
		 * The lease tokens of the runs of a task whose success was recorded in Redis.
		 */
		List<String> succeeded(TaskId id) {
			return this.succeeded.stream()
				.filter((context) -> context.id().equals(id))
				.map(TaskContext::leaseToken)
				.toList();
		}

		List<Run> runs(TaskId id) {
			return this.runs.stream().filter((run) -> run.context().id().equals(id)).toList();
		}

		long finished(TaskId id) {
			return runs(id).stream().filter(Run::isFinished).count();
		}

		String name(TaskId id) {
			return runs(id).stream().findFirst().map((run) -> run.work.name()).orElse(id.value());
		}

		List<String> staleAcks(String queue) {
			return this.staleAcks.stream()
				.filter((context) -> context.queue().equals(queue))
				.map((context) -> context.id().value())
				.toList();
		}

	}

}

package dev.delayedtasks.worker;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.store.PartitionKeys;
import dev.delayedtasks.store.StoreInvariantChecks;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.CrashTestWorker.CrashJob;
import dev.delayedtasks.worker.RunLog.Run;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A worker in a JVM of its own is killed with SIGKILL while it runs tasks: every task
 * still completes on another worker after lease + grace, and only the tasks that were in
 * flight at the kill run twice.
 */
@WithRedis
class WorkerCrashIntegrationTests {

	private static final String QUEUE = "crash";

	private static final Duration LEASE = Duration.ofSeconds(2);

	private static final Duration GRACE = Duration.ofMillis(500);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	WorkerCrashIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=" + LEASE.toMillis() + "ms",
					"delayed-tasks.worker.reap-grace=" + GRACE.toMillis() + "ms", "delayed-tasks.worker.timer-ttl=1s",
					"delayed-tasks.worker.shutdown-timeout=1s");
	}

	@Test
	void tasksOfAWorkerKilledWithSigkillCompleteOnAnotherWorkerAndOnlyTasksInFlightRunTwice() throws Exception {
		Process child = startChildWorker();
		ChildOutput output = new ChildOutput(child);
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> output.contains("@@READY") || !child.isAlive());
			assertThat(child.isAlive()).as("child worker started").isTrue();
			this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((producer) -> {
				DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
				List<TaskId> shortTasks = new ArrayList<>();
				List<TaskId> longTasks = new ArrayList<>();
				for (int i = 0; i < 4; i++) {
					shortTasks.add(scheduler.enqueue(QUEUE, new CrashJob(i, 100)));
				}
				for (int i = 0; i < 8; i++) {
					longTasks.add(scheduler.enqueue(QUEUE, new CrashJob(10 + i, 60_000)));
				}
				// Four short tasks done, four long ones running (concurrency 4), four
				// long ones waiting.
				await().atMost(Duration.ofSeconds(10))
					.until(() -> output.ids("@@DONE ").size() == 4 && output.ids("@@STARTED ").size() == 8);
				Thread.sleep(300);
				Set<String> doneInChild = output.ids("@@DONE ");
				Set<String> inFlight = new HashSet<>(output.ids("@@STARTED "));
				inFlight.removeAll(doneInChild);
				assertThat(doneInChild).containsExactlyInAnyOrderElementsOf(values(shortTasks));
				assertThat(inFlight).hasSize(4).isSubsetOf(values(longTasks));
				for (String id : inFlight) {
					assertThat(scheduler.find(QUEUE, TaskId.of(id))).map(TaskInfo::state).hasValue(TaskState.ACTIVE);
				}

				long killedAt = System.nanoTime();
				child.destroyForcibly();
				assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();

				RunLog log = new RunLog();
				this.runner.withBean(RunLog.class, () -> log)
					.withUserConfiguration(InTestWorker.class)
					.run((worker) -> {
						await().atMost(Duration.ofSeconds(10)).until(() -> log.byId().size() == 8);
						Thread.sleep(500);
						assertThat(log.runs()).hasSize(8);
						assertThat(log.byId().keySet()).containsExactlyInAnyOrderElementsOf(longTasks);
						for (Run run : log.runs()) {
							boolean wasInFlight = inFlight.contains(run.context().id().value());
							assertThat(run.context().attempt()).isEqualTo(1);
							assertThat(run.context().deliveryCount()).as("deliveries of %s", run)
								.isEqualTo(wasInFlight ? 2 : 1);
							if (wasInFlight) {
								// Not taken before the lease (extended by heartbeats
								// until
								// the kill) ran out, and taken back within seconds.
								Duration recovered = Duration.ofNanos(run.startedNanos() - killedAt);
								assertThat(recovered).isBetween(
										LEASE.minus(LEASE.dividedBy(3)).plus(GRACE).minusMillis(200),
										Duration.ofSeconds(6));
							}
						}
						System.out.println("crash recovery_ms=" + inFlight.stream()
							.map((id) -> Duration.ofNanos(log.of(TaskId.of(id)).get(0).startedNanos() - killedAt)
								.toMillis())
							.sorted()
							.toList());
						assertPartitionEmpty(worker.getBean(StringRedisTemplate.class));
					});
			});
		}
		finally {
			child.destroyForcibly();
			child.waitFor(10, TimeUnit.SECONDS);
		}
	}

	private Process startChildWorker() throws IOException {
		String java = ProcessHandle.current()
			.info()
			.command()
			.orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		List<String> command = List.of(java, "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp",
				System.getProperty("java.class.path"), CrashTestWorker.class.getName(),
				"--spring.data.redis.url=" + this.redis.url(), "--delayed-tasks.key-prefix=" + this.redis.keyPrefix(),
				"--delayed-tasks.worker.lease-duration=" + LEASE.toMillis() + "ms",
				"--delayed-tasks.worker.reap-grace=" + GRACE.toMillis() + "ms", "--delayed-tasks.worker.timer-ttl=1s",
				"--crash.queue=" + QUEUE, "--crash.concurrency=4", "--spring.main.banner-mode=off",
				"--logging.level.root=WARN", "--logging.level.dev.delayedtasks=INFO");
		return new ProcessBuilder(command).redirectErrorStream(true).start();
	}

	private void assertPartitionEmpty(StringRedisTemplate template) {
		PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), QUEUE);
		await().atMost(Duration.ofSeconds(2))
			.untilAsserted(() -> assertThat(template.opsForZSet().zCard(keys.lease())).isZero());
		assertThat(template.opsForZSet().zCard(keys.sched())).isZero();
		assertThat(template.opsForList().size(keys.ready())).isZero();
		assertThat(template.opsForZSet().zCard(keys.dead())).isZero();
		assertThat(template.keys(keys.base() + "t:*")).isEmpty();
		assertThat(StoreInvariantChecks.violations(template, this.redis.keyPrefix(), QUEUE)).isEmpty();
	}

	private static List<String> values(List<TaskId> ids) {
		return ids.stream().map(TaskId::value).toList();
	}

	/** The child's output lines, read on a thread of their own and echoed. */
	private static final class ChildOutput {

		private final List<String> lines = new CopyOnWriteArrayList<>();

		ChildOutput(Process process) {
			Thread reader = new Thread(() -> {
				try (BufferedReader in = new BufferedReader(
						new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
					String line;
					while ((line = in.readLine()) != null) {
						this.lines.add(line);
						System.out.println("[child] " + line);
					}
				}
				catch (IOException ex) {
					// the child is gone
				}
			}, "crash-child-output");
			reader.setDaemon(true);
			reader.start();
		}

		boolean contains(String line) {
			return this.lines.contains(line);
		}

		Set<String> ids(String prefix) {
			Set<String> ids = new HashSet<>();
			for (String line : this.lines) {
				if (line.startsWith(prefix)) {
					ids.add(line.substring(prefix.length()).split(" ")[0]);
				}
			}
			return ids;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class InTestWorker {

		private final RunLog log;

		InTestWorker(RunLog log) {
			this.log = log;
		}

		@DelayedTaskHandler(queue = QUEUE, concurrency = "8")
		void handle(CrashJob job, TaskContext context) {
			this.log.started("in-test", context, job).finished();
		}

	}

}

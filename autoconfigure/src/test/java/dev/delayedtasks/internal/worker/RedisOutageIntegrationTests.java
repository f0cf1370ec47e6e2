package dev.delayedtasks.internal.worker;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Redis unreachable for 5 s (its process stopped with {@code SIGSTOP}): scheduling fails
 * fast with a clear exception, dispatchers and the timer resume promptly when it comes
 * back, and nothing is lost.
 */
@WithRedis(privateServer = true)
class RedisOutageIntegrationTests {

	private static final String QUEUE = "outage";

	private static final Duration OUTAGE = Duration.ofSeconds(5);

	/**
	 * Long enough that a task leased by a claim whose reply was lost, if not recovered,
	 * shows up as a late run.
	 */
	private static final Duration LEASE = Duration.ofSeconds(5);

	private static final int BEFORE = 10;

	private static final int AFTER = 5;

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	RedisOutageIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases
			.runner(redis, "spring.data.redis.timeout=500ms",
					"delayed-tasks.worker.lease-duration=" + LEASE.toMillis() + "ms")
			.withUserConfiguration(Handlers.class);
	}

	@Test
	void schedulingFailsFastDuringAnOutageAndEverythingRunsOnceAfterIt() {
		assertThat(this.redis.server()).as("SIGSTOP needs a redis-server process started by this JVM")
			.isInstanceOf(RedisProcess.class);
		RedisProcess server = (RedisProcess) this.redis.server();
		String pid = Long.toString(server.process().pid());
		this.runner.run((context) -> {
			Handlers handlers = context.getBean(Handlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduler.schedule(QUEUE, new Job("warm-up"), Duration.ZERO);
			await().atMost(Duration.ofSeconds(10)).until(() -> handlers.ran("warm-up") == 1);
			List<String> before = new ArrayList<>();
			for (int i = 0; i < BEFORE; i++) {
				String name = "before-" + i;
				before.add(name);
				// Due between 1 s and ~4.2 s from now: inside the outage.
				scheduler.schedule(QUEUE, new Job(name), Duration.ofMillis(1000 + i * 350L));
			}
			Instant resumedAt;
			try {
				signal("STOP", pid);
				long stoppedAt = System.nanoTime();
				Thread.sleep(300);
				long start = System.nanoTime();
				Throwable failure = catchThrowable(
						() -> scheduler.schedule(QUEUE, new Job("during"), Duration.ofMillis(100)));
				long failFastMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
				System.out.println("fail_fast_ms=" + failFastMs);
				assertThat(failure).isInstanceOf(TaskStoreException.class).hasMessageContaining("'" + QUEUE + "'");
				System.out.println("fail_fast_message=" + failure.getMessage());
				assertThat(failFastMs).isLessThan(2000);
				long remaining = OUTAGE.toNanos() - (System.nanoTime() - stoppedAt);
				if (remaining > 0) {
					Thread.sleep(TimeUnit.NANOSECONDS.toMillis(remaining));
				}
				assertThat(handlers.runs).as("nothing runs while Redis is stopped")
					.noneMatch((run) -> run.job().name().startsWith("before-"));
			}
			finally {
				signal("CONT", pid);
				resumedAt = Instant.now();
			}
			await().atMost(Duration.ofSeconds(10))
				.until(() -> before.stream().allMatch((name) -> handlers.ran(name) >= 1));
			Instant firstRun = handlers.runs.stream()
				.filter((run) -> run.job().name().startsWith("before-"))
				.map(Run::at)
				.min(Instant::compareTo)
				.orElseThrow();
			Instant lastRun = handlers.runs.stream()
				.filter((run) -> run.job().name().startsWith("before-"))
				.map(Run::at)
				.max(Instant::compareTo)
				.orElseThrow();
			long resumeMs = Duration.between(resumedAt, firstRun).toMillis();
			long allRunMs = Duration.between(resumedAt, lastRun).toMillis();
			System.out.println("resume_ms=" + resumeMs + " all_overdue_ran_ms=" + allRunMs);
			System.out.println("overdue_run_offsets_ms=" + handlers.runs.stream()
				.filter((run) -> run.job().name().startsWith("before-"))
				.map((run) -> run.job().name() + "@" + Duration.between(resumedAt, run.at()).toMillis() + "/delivery"
						+ run.context().deliveryCount())
				.toList());
			assertThat(resumeMs).isLessThan(2000);
			assertThat(allRunMs).as("claims that timed out during the outage gave their tasks back")
				.isLessThan(LEASE.toMillis());
			List<String> after = new ArrayList<>();
			for (int i = 0; i < AFTER; i++) {
				String name = "after-" + i;
				after.add(name);
				scheduler.schedule(QUEUE, new Job(name), Duration.ofMillis(200));
			}
			await().atMost(Duration.ofSeconds(10))
				.until(() -> after.stream().allMatch((name) -> handlers.ran(name) >= 1));
			// Longer than lease + grace, so a lost ack would show up as a redelivery.
			Thread.sleep(LEASE.toMillis() + 1000);
			Map<String, Long> counts = handlers.runs.stream()
				.collect(Collectors.groupingBy((run) -> run.job().name(), Collectors.counting()));
			System.out.println("run_counts=" + counts);
			for (String name : before) {
				assertThat(counts.get(name)).as(name).isEqualTo(1L);
			}
			for (String name : after) {
				assertThat(counts.get(name)).as(name).isEqualTo(1L);
			}
			// The failed call may or may not have stored its task (the command
			// was written before the timeout), but it never runs twice.
			assertThat(counts.getOrDefault("during", 0L)).as("during").isLessThanOrEqualTo(1L);
		});
	}

	private static void signal(String signal, String pid) throws IOException, InterruptedException {
		Process kill = new ProcessBuilder("kill", "-" + signal, pid).inheritIO().start();
		assertThat(kill.waitFor(5, TimeUnit.SECONDS)).isTrue();
		assertThat(kill.exitValue()).as("kill -" + signal + " " + pid).isZero();
	}

	record Job(String name) {
	}

	record Run(Job job, TaskContext context, Instant at) {
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		final List<Run> runs = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = QUEUE)
		void run(Job job, TaskContext context) {
			this.runs.add(new Run(job, context, Instant.now()));
		}

		long ran(String name) {
			return this.runs.stream().filter((run) -> run.job().name().equals(name)).count();
		}

	}

}

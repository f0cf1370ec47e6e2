package dev.delayedtasks.internal.worker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.internal.worker.CrashTestWorker.CrashJob;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.awaitility.Awaitility.await;

/**
 * One of two worker JVMs is stopped gracefully ({@code SIGTERM}) while its handlers run,
 * as in a rolling deploy. A handler is interrupted first and given the shutdown timeout
 * to return; a run is handed over to the other instance only once its handler has
 * returned, so no task ever runs twice at the same time, and none is lost. A handler that
 * ignores the interrupt keeps its lease until the instance is gone, and is reaped after
 * lease + grace; one that honours it is handed over at once.
 */
@WithRedis(privateServer = true)
class GracefulShutdownHandOverIntegrationTests {

	private static final int CONCURRENCY = 4;

	/** Both children have the spare permits to take over all the other's runs. */
	private static final int TASKS = CONCURRENCY;

	private static final long JOB_MILLIS = 8000;

	private final TestRedis redis;

	private final ApplicationContextRunner producer;

	GracefulShutdownHandOverIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.producer = ShortLeases.runner(redis).withPropertyValues("delayed-tasks.worker.enabled=false");
	}

	@Test
	void aHandlerThatIgnoresTheInterruptKeepsItsLeaseUntilItsInstanceIsGoneAndNeverRunsTwiceAtOnce() throws Exception {
		String queue = "hand-over-stubborn";
		Duration shutdownTimeout = Duration.ofSeconds(2);
		List<ChildWorker> children = startTwo(queue, "crash.mode=busy", "crash.on-interrupt=ignore",
				"delayed-tasks.worker.shutdown-timeout=" + shutdownTimeout.toMillis() + "ms");
		try {
			this.producer.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				List<String> tasks = startTasks(scheduler, queue, children);
				ChildWorker stopped = busier(children);
				ChildWorker other = (stopped == children.get(0)) ? children.get(1) : children.get(0);
				Set<String> handedOver = stopped.inFlight();
				long terminatedAt = System.currentTimeMillis();
				stopped.signal("TERM");
				long exitedAt = stopped.awaitExit(shutdownTimeout.plusSeconds(10));
				await()
					.atMost(shutdownTimeout.plus(ShortLeases.LEASE)
						.plus(ShortLeases.GRACE)
						.plusMillis(JOB_MILLIS)
						.plusSeconds(10))
					.until(() -> done(children).containsAll(tasks));

				SoftAssertions softly = new SoftAssertions();
				Map<String, List<Run>> runs = runs(children);
				System.out.println("stubborn hand-over: TERM at " + terminatedAt + ", exit after "
						+ (exitedAt - terminatedAt) + " ms; runs " + describe(runs, terminatedAt));
				assertNoOverlap(softly, runs);
				assertEachDoneOnce(softly, children, tasks);
				for (String id : handedOver) {
					Run takeover = runs.get(id)
						.stream()
						.filter((run) -> run.child() == other)
						.findFirst()
						.orElseThrow(() -> new AssertionError("Task " + id + " never ran on " + other));
					// Reaped after the dead instance's lease ran out, which counts a
					// delivery; a release at shutdown would not.
					softly.assertThat(takeover.delivery())
						.as("delivery of %s on the other instance (reaped, not released)", id)
						.isEqualTo(2);
					softly.assertThat(takeover.start() - exitedAt)
						.as("start of %s on the other instance after the stopped one exited (ms)", id)
						.isPositive();
				}
				softly.assertAll();
			});
		}
		finally {
			closeAll(children);
		}
	}

	@Test
	void aHandlerThatHonoursTheInterruptIsHandedOverAtOnceAndNeverRunsTwiceAtOnce() throws Exception {
		String queue = "hand-over-interruptible";
		// Long, so that waiting it out cannot pass for a prompt hand-over.
		Duration shutdownTimeout = Duration.ofSeconds(5);
		List<ChildWorker> children = startTwo(queue, "crash.mode=busy", "crash.on-interrupt=stop",
				"delayed-tasks.worker.shutdown-timeout=" + shutdownTimeout.toMillis() + "ms");
		try {
			this.producer.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				List<String> tasks = startTasks(scheduler, queue, children);
				ChildWorker stopped = busier(children);
				ChildWorker other = (stopped == children.get(0)) ? children.get(1) : children.get(0);
				Set<String> handedOver = stopped.inFlight();
				long terminatedAt = System.currentTimeMillis();
				stopped.signal("TERM");
				await().atMost(Duration.ofMillis(JOB_MILLIS).plus(shutdownTimeout).plusSeconds(10))
					.until(() -> done(children).containsAll(tasks));
				long exitedAt = stopped.awaitExit(Duration.ofSeconds(5));

				SoftAssertions softly = new SoftAssertions();
				Map<String, List<Run>> runs = runs(children);
				System.out.println("interruptible hand-over: TERM at " + terminatedAt + ", exit after "
						+ (exitedAt - terminatedAt) + " ms; runs " + describe(runs, terminatedAt));
				assertNoOverlap(softly, runs);
				assertEachDoneOnce(softly, children, tasks);
				for (String id : handedOver) {
					Run takeover = runs.get(id)
						.stream()
						.filter((run) -> run.child() == other)
						.findFirst()
						.orElseThrow(() -> new AssertionError("Task " + id + " never ran on " + other));
					// Released, not reaped after its lease ran out (a reap counts a
					// delivery), and well before the shutdown timeout ends.
					softly.assertThat(takeover.delivery())
						.as("delivery of %s on the other instance (released, not reaped)", id)
						.isEqualTo(1);
					softly.assertThat(takeover.start() - terminatedAt)
						.as("start of %s on the other instance after SIGTERM (ms; shutdown timeout %s)", id,
								shutdownTimeout)
						.isLessThan(shutdownTimeout.dividedBy(2).toMillis());
				}
				softly.assertAll();
			});
		}
		finally {
			closeAll(children);
		}
	}

	/**
	 * Start two children at once (each takes seconds to start).
	 */
	private List<ChildWorker> startTwo(String queue, String... properties) {
		List<CompletableFuture<ChildWorker>> starting = new ArrayList<>();
		for (String name : List.of("worker-1", "worker-2")) {
			starting.add(CompletableFuture.supplyAsync(() -> {
				try {
					return ChildWorker.start(name, this.redis, queue, CONCURRENCY, properties);
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			}));
		}
		List<ChildWorker> children = new ArrayList<>();
		Throwable failure = null;
		for (CompletableFuture<ChildWorker> child : starting) {
			try {
				children.add(child.join());
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
		}
		if (failure != null) {
			closeAll(children);
			throw new AssertionError("Could not start the workers", failure);
		}
		return children;
	}

	/**
	 * Schedule the tasks one at a time, each once the previous one runs, so that the
	 * children's dispatchers take turns.
	 */
	private static List<String> startTasks(DelayedTaskScheduler scheduler, String queue, List<ChildWorker> children) {
		List<String> tasks = new ArrayList<>();
		for (int i = 0; i < TASKS; i++) {
			String id = scheduler.enqueue(queue, new CrashJob(i, JOB_MILLIS)).value();
			tasks.add(id);
			await().atMost(Duration.ofSeconds(10)).until(() -> inFlight(children).contains(id));
		}
		// A run's first lease extension is under way, as on a real deploy.
		sleep(ShortLeases.LEASE.dividedBy(2).toMillis());
		return tasks;
	}

	private static ChildWorker busier(List<ChildWorker> children) {
		return children.stream().max(Comparator.comparingInt((child) -> child.inFlight().size())).orElseThrow();
	}

	private static Set<String> inFlight(List<ChildWorker> children) {
		Set<String> ids = new HashSet<>();
		children.forEach((child) -> ids.addAll(child.inFlight()));
		return ids;
	}

	private static Set<String> done(List<ChildWorker> children) {
		Set<String> ids = new HashSet<>();
		children.forEach((child) -> ids.addAll(child.ids("@@DONE ")));
		return ids;
	}

	/**
	 * Every run of every task, from its {@code @@STARTED} line to its {@code @@ENDED}
	 * line, or to its child's exit when it never ended (the JVM exits while a handler
	 * runs), or for ever while the child lives.
	 */
	private static Map<String, List<Run>> runs(List<ChildWorker> children) {
		Map<String, List<Run>> runs = new LinkedHashMap<>();
		for (ChildWorker child : children) {
			long end = child.isAlive() ? Long.MAX_VALUE : exitTime(child);
			Map<String, Run> open = new LinkedHashMap<>();
			for (String[] event : child.events("@@")) {
				String kind = event[0];
				if (kind.equals("STARTED")) {
					String id = event[1];
					open.put(id, new Run(child, id, Integer.parseInt(event[2]), Long.parseLong(event[6]), end, -1));
				}
				else if (kind.equals("ALIVE") && open.containsKey(event[1])) {
					open.computeIfPresent(event[1], (id, run) -> run.alive(Long.parseLong(event[2])));
				}
				else if (kind.equals("ENDED") && open.containsKey(event[1])) {
					Run run = open.remove(event[1]);
					runs.computeIfAbsent(run.id(), (id) -> new ArrayList<>())
						.add(run.endedAt(Long.parseLong(event[2])));
				}
			}
			open.values().forEach((run) -> runs.computeIfAbsent(run.id(), (id) -> new ArrayList<>()).add(run));
		}
		runs.values().forEach((list) -> list.sort(Comparator.comparingLong(Run::start)));
		return runs;
	}

	private static long exitTime(ChildWorker child) {
		try {
			return child.awaitExit(Duration.ofSeconds(1));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static void assertNoOverlap(SoftAssertions softly, Map<String, List<Run>> runs) {
		runs.forEach((id, list) -> {
			for (int i = 1; i < list.size(); i++) {
				Run before = list.get(i - 1);
				Run after = list.get(i);
				softly.assertThat(after.start())
					.as("task %s started on %s while it still ran on %s (last alive %d, ended/exited %d): %s", id,
							after.child(), before.child(), before.lastAlive(), before.end(), list)
					// The same millisecond: ended (printed before it returned) first.
					.isGreaterThanOrEqualTo(Math.max(before.end(), before.lastAlive()));
			}
		});
	}

	private static void assertEachDoneOnce(SoftAssertions softly, List<ChildWorker> children, List<String> tasks) {
		List<String> completions = new ArrayList<>();
		children.forEach((child) -> child.events("@@DONE ").forEach((event) -> completions.add(event[0])));
		softly.assertThat(completions).as("completed runs").containsExactlyInAnyOrderElementsOf(tasks);
	}

	private static String describe(Map<String, List<Run>> runs, long origin) {
		return runs.entrySet()
			.stream()
			.map((entry) -> entry.getKey() + "="
					+ entry.getValue()
						.stream()
						.map((run) -> run.describe(origin))
						.collect(Collectors.joining(",", "[", "]")))
			.collect(Collectors.joining(" "));
	}

	private static void closeAll(List<ChildWorker> children) {
		for (ChildWorker child : children) {
			try {
				child.close();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * One run of a task in a child, epoch milliseconds of that child's clock (the same
	 * host's as this JVM's).
	 */
	private record Run(ChildWorker child, String id, int delivery, long start, long end, long lastAlive) {

		Run alive(long at) {
			return new Run(this.child, this.id, this.delivery, this.start, this.end, at);
		}

		Run endedAt(long at) {
			return new Run(this.child, this.id, this.delivery, this.start, at, this.lastAlive);
		}

		String describe(long origin) {
			return this.child + "#" + this.delivery + "@" + (this.start - origin) + ".."
					+ ((this.end != Long.MAX_VALUE) ? (this.end - origin) : "running") + "ms";
		}

	}

}

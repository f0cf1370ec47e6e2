package dev.delayedtasks.testing;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two test classes with application contexts of their own, run at once by
 * {@link TwoTestClassesIsolationIntegrationTests} against the one Redis of the test run:
 * both schedule tasks with the same ids into the same queue and move their clocks, and
 * each must see only its own. Not named {@code *Tests}: they run only when launched.
 */
final class IsolationScenarios {

	/** The configuration parameter the launching test sets. */
	static final String LAUNCHED = "delayed-tasks.test.scenarios";

	/** Both classes wait here for the other, so their contexts run at the same time. */
	static final CyclicBarrier together = new CyclicBarrier(2);

	/** What each class saw: its Redis and its key prefix. */
	static final Map<String, String> seen = new ConcurrentHashMap<>();

	private static final int TASKS = 20;

	private IsolationScenarios() {
	}

	/**
	 * Whether a test launched these classes, rather than a run of every class found.
	 * @param context the test's context
	 * @return whether the launching test set {@value #LAUNCHED}
	 */
	static boolean launched(ExtensionContext context) {
		return context.getConfigurationParameter(LAUNCHED).isPresent();
	}

	static void exercise(String side, DelayedTaskScheduler scheduler, DelayedTasksTester tasks,
			TestApplication.Handlers handlers, DataRedisConnectionDetails redis) throws Exception {
		seen.put(side + ".redis", redis.getStandalone().getHost() + ":" + redis.getStandalone().getPort());
		seen.put(side + ".prefix", tasks.keyPrefix());
		meet();
		List<TaskRequest> requests = IntStream.range(0, TASKS)
			.mapToObj((i) -> TaskRequest.of("emails", side + "-" + i).id("order-" + i).delay(Duration.ofHours(1)))
			.toList();
		// With a shared prefix the second class would find the first one's tasks.
		assertThat(requests.stream().map(scheduler::submit).map(ScheduleResult::outcome))
			.containsOnly(ScheduleResult.Outcome.CREATED);
		meet();
		tasks.advanceTime(Duration.ofHours(1));
		for (int i = 0; i < TASKS; i++) {
			tasks.awaitCompleted("emails", new TaskId("order-" + i));
		}
		tasks.awaitIdle("emails", Duration.ofSeconds(10));
		// With a shared prefix the other context's workers would have run some of them.
		assertThat(handlers.sent()).hasSize(TASKS).allMatch((email) -> email.startsWith(side + "-"));
		assertThat(tasks.runs("emails")).hasSize(TASKS);
		meet();
	}

	private static void meet() throws InterruptedException, BrokenBarrierException, TimeoutException {
		together.await(30, TimeUnit.SECONDS);
	}

	@SpringBootTest(classes = TestApplication.class, properties = "isolation.side=first")
	@AutoConfigureDelayedTasks
	@EnabledIf("dev.delayedtasks.testing.IsolationScenarios#launched")
	static class First {

		@Autowired
		private DelayedTaskScheduler scheduler;

		@Autowired
		private DelayedTasksTester tasks;

		@Autowired
		private TestApplication.Handlers handlers;

		@Autowired
		private DataRedisConnectionDetails redis;

		@Test
		void seesOnlyItsOwnTasks() throws Exception {
			exercise("first", this.scheduler, this.tasks, this.handlers, this.redis);
		}

	}

	@SpringBootTest(classes = TestApplication.class, properties = "isolation.side=second")
	@AutoConfigureDelayedTasks
	@EnabledIf("dev.delayedtasks.testing.IsolationScenarios#launched")
	static class Second {

		@Autowired
		private DelayedTaskScheduler scheduler;

		@Autowired
		private DelayedTasksTester tasks;

		@Autowired
		private TestApplication.Handlers handlers;

		@Autowired
		private DataRedisConnectionDetails redis;

		@Test
		void seesOnlyItsOwnTasks() throws Exception {
			exercise("second", this.scheduler, this.tasks, this.handlers, this.redis);
		}

	}

}

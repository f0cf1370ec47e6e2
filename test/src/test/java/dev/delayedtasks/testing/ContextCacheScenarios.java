package dev.delayedtasks.testing;

import java.time.Duration;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Test classes run one after another by {@link ContextCacheIntegrationTests}: the first
 * and the last share a cached context, which Spring pauses (stopping its workers) while
 * the middle one runs with a context of its own, and restarts for the last. Not named
 * {@code *Tests}: they run only when launched.
 */
final class ContextCacheScenarios {

	/** The configuration parameter the launching test sets. */
	static final String LAUNCHED = "delayed-tasks.test.scenarios";

	private ContextCacheScenarios() {
	}

	/**
	 * Whether a test launched these classes, rather than a run of every class found.
	 * @param context the test's context
	 * @return whether the launching test set {@value #LAUNCHED}
	 */
	static boolean launched(ExtensionContext context) {
		return context.getConfigurationParameter(LAUNCHED).isPresent();
	}

	static void runsADelayedTask(DelayedTaskScheduler scheduler, DelayedTasksTester tasks) {
		assertThat(tasks.runs()).isEmpty();
		TaskId id = scheduler.schedule("emails", "cached", Duration.ofHours(1));
		tasks.advanceTime(Duration.ofHours(1));
		tasks.awaitCompleted("emails", id);
		assertThat(tasks.runs()).hasSize(1);
	}

	@SpringBootTest(classes = TestApplication.class)
	@AutoConfigureDelayedTasks
	@EnabledIf("dev.delayedtasks.testing.ContextCacheScenarios#launched")
	@Order(1)
	static class First {

		@Autowired
		private DelayedTaskScheduler scheduler;

		@Autowired
		private DelayedTasksTester tasks;

		@Test
		void runsADelayedTask() {
			ContextCacheScenarios.runsADelayedTask(this.scheduler, this.tasks);
		}

	}

	@SpringBootTest(classes = TestApplication.class, properties = "context-cache.other=true")
	@AutoConfigureDelayedTasks
	@EnabledIf("dev.delayedtasks.testing.ContextCacheScenarios#launched")
	@Order(2)
	static class Other {

		@Autowired
		private DelayedTaskScheduler scheduler;

		@Autowired
		private DelayedTasksTester tasks;

		@Test
		void runsADelayedTask() {
			ContextCacheScenarios.runsADelayedTask(this.scheduler, this.tasks);
		}

	}

	@SpringBootTest(classes = TestApplication.class)
	@AutoConfigureDelayedTasks
	@EnabledIf("dev.delayedtasks.testing.ContextCacheScenarios#launched")
	@Order(3)
	static class SameAsFirst {

		@Autowired
		private DelayedTaskScheduler scheduler;

		@Autowired
		private DelayedTasksTester tasks;

		@Test
		void runsADelayedTask() {
			ContextCacheScenarios.runsADelayedTask(this.scheduler, this.tasks);
		}

	}

}

package dev.delayedtasks.testing;

import java.time.Duration;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.testing.TaskRun.Outcome;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DelayedTasksTest}: handlers tested with plain JUnit, without
 * {@code @SpringBootTest}.
 */
@DelayedTasksTest(classes = TestApplication.Handlers.class,
		properties = { "delayed-tasks.queues.invoices.retry.max-retries=0", "delayed-tasks.key-prefix=ignored" })
class PlainJUnitIntegrationTests {

	@Test
	void aHandlerRunsOnAdvancedTime(DelayedTaskScheduler scheduler, DelayedTasksTester tasks,
			TestApplication.Handlers handlers) {
		TaskId id = scheduler.schedule("emails", "plain", Duration.ofDays(1));
		tasks.advanceTime(Duration.ofDays(1));
		assertThat(tasks.awaitCompleted("emails", id).outcome()).isEqualTo(Outcome.SUCCEEDED);
		assertThat(handlers.sent()).containsExactly("plain");
		assertThat(tasks.keyPrefix()).startsWith("dtt-");
	}

	@Test
	void propertiesApplyAndEachTestStartsClean(DelayedTaskScheduler scheduler, DelayedTasksTester tasks) {
		assertThat(tasks.runs()).isEmpty();
		TaskId id = scheduler.enqueue("invoices", "no retries");
		tasks.awaitIdle("invoices", Duration.ofSeconds(5));
		assertThat(tasks.runs("invoices", id)).singleElement()
			.extracting(TaskRun::outcome)
			.isEqualTo(Outcome.DEAD_LETTERED);
	}

}

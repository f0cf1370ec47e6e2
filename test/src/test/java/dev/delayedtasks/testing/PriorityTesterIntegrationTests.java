package dev.delayedtasks.testing;

import java.time.Duration;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Priorities through the test kit: {@link DelayedTasksTester} sees a ready task of any
 * priority, as it sees one of priority 0
 * ({@code DelayedTasksTesterIntegrationTests.pausedWorkersRunDueTasksOnlyWhenAsked}): its
 * {@code idle.lua} counts the ready list of every priority, so {@code awaitIdle} and
 * {@code runDue} see a task waiting in {@code ready:5}.
 */
@SpringBootTest(classes = TestApplication.class, properties = "delayed-tasks.key-prefix=app-priority")
@AutoConfigureDelayedTasks
class PriorityTesterIntegrationTests {

	@Autowired
	private DelayedTaskScheduler scheduler;

	@Autowired
	private DelayedTasksTester tasks;

	@Test
	void awaitIdleOnAPausedQueueSeesAReadyTaskOfAnotherPriority() {
		this.tasks.pauseWorkers();
		this.scheduler.schedule(TaskRequest.of("emails", "urgent").priority(5));
		assertThatIllegalStateException().isThrownBy(() -> this.tasks.awaitIdle("emails", Duration.ofSeconds(2)))
			.withMessageContaining("paused");
	}

	/**
	 * {@code runDue} resumes the queue and returns once {@code awaitIdle} finds it idle:
	 * a task in {@code ready:5} counts as nothing, so it returns at once unless the
	 * dispatcher happens to lease the task before the first look (a race).
	 */
	@RepeatedTest(20)
	void runDueRunsAReadyTaskOfAnotherPriority() {
		this.tasks.pauseWorkers();
		TaskId id = this.scheduler.schedule(TaskRequest.of("emails", "urgent").priority(5));
		assertThat(this.tasks.runDue()).extracting(TaskRun::id).containsExactly(id);
	}

}

package dev.delayedtasks.testing;

import java.time.Duration;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.json.JsonTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AutoConfigureDelayedTasks} on a test slice, whose own auto-configurations know
 * nothing of Redis or delayed-tasks: the annotation brings them.
 */
@JsonTest
@AutoConfigureDelayedTasks
class SliceIntegrationTests {

	@Autowired
	private DelayedTaskScheduler scheduler;

	@Autowired
	private DelayedTasksTester tasks;

	@Autowired
	private TestApplication.Handlers handlers;

	@Test
	void aSliceGetsRedisTheSchedulerTheWorkersAndTheTester() {
		TaskId id = this.scheduler.schedule("emails", "from a slice", Duration.ofMinutes(10));
		this.tasks.advanceTime(Duration.ofMinutes(10));
		this.tasks.awaitCompleted("emails", id);
		assertThat(this.handlers.sent()).containsExactly("from a slice");
		assertThat(this.tasks.keyPrefix()).startsWith("dtt-");
	}

}

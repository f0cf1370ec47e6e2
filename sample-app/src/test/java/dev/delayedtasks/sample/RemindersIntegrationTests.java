package dev.delayedtasks.sample;

import java.time.Duration;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.testing.AutoConfigureDelayedTasks;
import dev.delayedtasks.testing.DelayedTasksTester;
import dev.delayedtasks.testing.TaskRun;
import dev.delayedtasks.testing.TaskRun.Outcome;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's handlers tested the way an application tests its own: with
 * {@code delayed-tasks-test}, on time moved forward by the test, in well under a second.
 */
@SpringBootTest(properties = { "sample.demo-tasks=false", "delayed-tasks.queues.doomed.retry.delay=10m",
		"delayed-tasks.queues.doomed.retry.multiplier=1", "delayed-tasks.queues.doomed.retry.max-delay=1h" })
@AutoConfigureDelayedTasks
class RemindersIntegrationTests {

	@Autowired
	private DelayedTaskScheduler scheduler;

	@Autowired
	private DelayedTasksTester tasks;

	@Autowired
	private DemoHandlers handlers;

	@Test
	void aReminderScheduledAnHourAheadIsSentOnceTheHourHasPassed() {
		long started = System.nanoTime();
		TaskId id = this.scheduler.schedule("reminders", new Reminder("ada", "stand up and stretch"),
				Duration.ofHours(1));
		this.tasks.awaitIdle("reminders", Duration.ofSeconds(5));
		assertThat(this.handlers.events()).noneMatch((event) -> event.startsWith("reminded ada"));

		this.tasks.advanceTime(Duration.ofHours(1));

		TaskRun run = this.tasks.awaitCompleted("reminders", id);
		assertThat(run.attempt()).isEqualTo(1);
		assertThat(this.handlers.events()).anyMatch((event) -> event.startsWith("reminded ada"));
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(1));
	}

	@Test
	void aTaskThatKeepsFailingIsRetriedEveryTenMinutesThenDeadLettered() {
		long started = System.nanoTime();
		TaskId id = this.scheduler.enqueue("doomed", new Reminder("nobody", "never delivered"));
		this.tasks.awaitIdle("doomed", Duration.ofSeconds(5));
		for (int retry = 1; retry <= 3; retry++) {
			assertThat(this.tasks.runs("doomed", id)).hasSize(retry).last().satisfies((last) -> {
				assertThat(last.outcome()).isEqualTo(Outcome.RETRIED);
				assertThat(last.failure()).isInstanceOf(IllegalArgumentException.class)
					.hasMessage("No mailbox for user nobody");
			});
			this.tasks.advanceTime(Duration.ofMinutes(10));
			this.tasks.awaitIdle("doomed", Duration.ofSeconds(5));
		}
		// delayed-tasks.retry.max-retries is 3: the fourth attempt is the last.
		assertThat(this.tasks.runs("doomed", id)).extracting(TaskRun::outcome)
			.containsExactly(Outcome.RETRIED, Outcome.RETRIED, Outcome.RETRIED, Outcome.DEAD_LETTERED);
		assertThat(this.tasks.deadLetters("doomed")).singleElement().satisfies((letter) -> {
			assertThat(letter.id()).isEqualTo(id);
			assertThat(letter.reason()).isEqualTo("retries-exhausted");
			assertThat(letter.attempts()).isEqualTo(4);
		});
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(1));
	}

}

package dev.delayedtasks.testing;

import java.time.Duration;
import java.time.Instant;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.testing.TaskRun.Outcome;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.within;

/**
 * {@link DelayedTasksTester} in a {@code @SpringBootTest}, the way an application's tests
 * use it.
 */
@SpringBootTest(classes = TestApplication.class,
		properties = { "delayed-tasks.key-prefix=app", "delayed-tasks.queues.invoices.retry.max-retries=2",
				"delayed-tasks.queues.invoices.retry.delay=10m", "delayed-tasks.queues.invoices.retry.max-delay=1h",
				"delayed-tasks.queues.invoices.retry.jitter=0ms" })
@AutoConfigureDelayedTasks
class DelayedTasksTesterIntegrationTests {

	@Autowired
	private DelayedTaskScheduler scheduler;

	@Autowired
	private DelayedTasksTester tasks;

	@Autowired
	private TestApplication.Handlers handlers;

	@Autowired
	private StringRedisTemplate redis;

	@Autowired
	private Environment environment;

	@Test
	void aTaskDueInAnHourRunsWhenTimeIsAdvancedAnHour() {
		TaskId id = this.scheduler.schedule("emails", "welcome ada", Duration.ofHours(1));
		this.tasks.awaitIdle("emails", Duration.ofSeconds(5));
		assertThat(this.tasks.runs()).isEmpty();
		long started = System.nanoTime();
		this.tasks.advanceTime(Duration.ofHours(1));
		TaskRun run = this.tasks.awaitCompleted("emails", id);
		Duration wallTime = Duration.ofNanos(System.nanoTime() - started);
		assertThat(run.attempt()).isEqualTo(1);
		assertThat(this.handlers.sent()).contains("welcome ada");
		assertThat(wallTime).isLessThan(Duration.ofMillis(500));
	}

	@Test
	void advancingLessThanTheDelayRunsNothing() {
		TaskId id = this.scheduler.schedule("emails", "later", Duration.ofMinutes(10));
		this.tasks.advanceTime(Duration.ofMinutes(9));
		this.tasks.awaitIdle("emails", Duration.ofSeconds(5));
		assertThat(this.tasks.runs("emails")).isEmpty();
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.tasks.awaitCompleted("emails", id, Duration.ofMillis(100)))
			.withMessageContaining("SCHEDULED")
			.withMessageContaining("ahead of the queue's clock: advanceTime(...) to run it now");
		this.tasks.advanceTime(Duration.ofMinutes(1));
		assertThat(this.tasks.awaitCompleted("emails", id).outcome()).isEqualTo(Outcome.SUCCEEDED);
	}

	@Test
	void aFailingTaskIsRetriedOnAdvancedTimeThenDeadLettered() {
		TaskId id = this.scheduler.schedule("invoices", "order-42", Duration.ZERO);
		this.tasks.awaitIdle("invoices", Duration.ofSeconds(5));
		assertThat(this.tasks.runs("invoices", id)).singleElement().satisfies((run) -> {
			assertThat(run.outcome()).isEqualTo(Outcome.RETRIED);
			assertThat(run.failure()).hasMessage("Billing is down for order-42");
			assertThat(Duration.between(this.tasks.now("invoices"), run.nextRunAt())).isBetween(Duration.ofMinutes(9),
					Duration.ofMinutes(10));
		});
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.tasks.awaitCompleted("invoices", id, Duration.ofMillis(100)))
			.withMessageContaining("runs again at")
			.withMessageContaining("advanceTime");
		this.tasks.advanceTime(Duration.ofMinutes(10));
		this.tasks.awaitIdle("invoices", Duration.ofSeconds(5));
		// The second retry's back-off is twice the first.
		this.tasks.advanceTime(Duration.ofMinutes(20));
		this.tasks.awaitIdle("invoices", Duration.ofSeconds(5));
		assertThat(this.tasks.runs("invoices", id)).extracting(TaskRun::attempt, TaskRun::outcome)
			.containsExactly(tuple(1, Outcome.RETRIED), tuple(2, Outcome.RETRIED), tuple(3, Outcome.DEAD_LETTERED));
		assertThat(this.tasks.deadLetters("invoices")).singleElement().satisfies((letter) -> {
			assertThat(letter.id()).isEqualTo(id);
			assertThat(letter.reason()).isEqualTo("retries-exhausted");
			assertThat(letter.attempts()).isEqualTo(3);
		});
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> this.tasks.awaitCompleted("invoices", id))
			.withMessageContaining("dead-lettered (retries-exhausted) after attempt 3");
	}

	@Test
	void pausedWorkersRunDueTasksOnlyWhenAsked() {
		this.tasks.pauseWorkers();
		TaskId first = this.scheduler.enqueue("emails", "first");
		TaskId second = this.scheduler.schedule("emails", "second", Duration.ofMinutes(5));
		assertThatIllegalStateException().isThrownBy(() -> this.tasks.awaitIdle("emails", Duration.ofSeconds(5)))
			.withMessageContaining("paused");
		assertThat(this.tasks.runDue()).extracting(TaskRun::id).containsExactly(first);
		assertThat(this.tasks.runDue()).isEmpty();
		this.tasks.advanceTime(Duration.ofMinutes(5));
		assertThat(this.tasks.runDue()).extracting(TaskRun::id).containsExactly(second);
		assertThat(this.scheduler.find("emails", second)).isEmpty();
		this.scheduler.enqueue("emails", "third");
		assertThatIllegalStateException().isThrownBy(() -> this.tasks.awaitIdle("emails", Duration.ofSeconds(5)));
		this.tasks.resumeWorkers();
		this.tasks.awaitIdle("emails", Duration.ofSeconds(5));
		assertThat(this.handlers.sent()).contains("first", "second", "third");
	}

	@Test
	void theClockOfAQueueMovesByWhatTheTestAdvanced() {
		Instant before = this.tasks.now("emails");
		Instant after = this.tasks.advanceTime("emails", Duration.ofDays(3));
		assertThat(Duration.between(before, after).toMillis()).isCloseTo(Duration.ofDays(3).toMillis(), within(1000L));
		assertThat(Duration.between(before, this.tasks.now("emails")).toMillis())
			.isCloseTo(Duration.ofDays(3).toMillis(), within(1000L));
		// Other queues keep their own clocks.
		assertThat(Duration.between(before, this.tasks.now("invoices"))).isLessThan(Duration.ofSeconds(1));
	}

	@Test
	void clearDeletesTheTasksTheRunsAndTheClockOffset() {
		this.scheduler.schedule(TaskRequest.of("emails", "kept?").delay(Duration.ofHours(2)).id("order-7"));
		this.tasks.advanceTime(Duration.ofHours(1));
		this.tasks.clear();
		assertThat(this.scheduler.find("emails", new TaskId("order-7"))).isEmpty();
		assertThat(Duration.between(Instant.now(), this.tasks.now("emails")).abs()).isLessThan(Duration.ofSeconds(1));
		// The timer owners take their timers again at once; nothing else is left.
		assertThat(this.redis.keys(this.tasks.keyPrefix() + ":{*")).allMatch((key) -> key.endsWith(":timer"));
		assertThat(this.tasks.runs()).isEmpty();
	}

	@Test
	void theContextWorksUnderAKeyPrefixOfItsOwn() {
		assertThat(this.tasks.keyPrefix()).matches("dtt-[0-9a-f]{8}")
			.isEqualTo(this.environment.getProperty("delayed-tasks.key-prefix"));
		TaskId id = this.scheduler.schedule("emails", "x", Duration.ofHours(1));
		assertThat(this.redis.hasKey(this.tasks.keyPrefix() + ":{emails:0}:t:" + id.value())).isTrue();
		assertThat(this.scheduler.find("emails", id))
			.hasValueSatisfying((info) -> assertThat(info.state()).isEqualTo(TaskState.SCHEDULED));
	}

	@Test
	void aRunningHandlerKeepsItsLeaseWhenTimeIsAdvanced() throws InterruptedException {
		TaskId id = this.scheduler.enqueue("slow", "long report");
		awaitRunning("slow");
		// An hour past a 30 s lease: had the lease not moved along, the timer would reap
		// the task and the second free worker would run it again.
		this.tasks.advanceTime(Duration.ofHours(1));
		Thread.sleep(300);
		assertThat(this.tasks.runs("slow")).singleElement().extracting(TaskRun::outcome).isEqualTo(Outcome.RUNNING);
		this.handlers.releaseSlowRun();
		assertThat(this.tasks.awaitCompleted("slow", id).attempt()).isEqualTo(1);
		this.tasks.awaitIdle("slow", Duration.ofSeconds(5));
		assertThat(this.tasks.runs("slow")).hasSize(1);
		assertThat(this.tasks.deadLetters("slow")).isEmpty();
	}

	private void awaitRunning(String queue) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (this.tasks.runs(queue).isEmpty()) {
			assertThat(System.nanoTime() - deadline).as("a run of %s started", queue).isNegative();
			Thread.sleep(5);
		}
	}

}

package dev.delayedtasks.internal.worker;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskOutcome.Kind;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An outcome belongs to one incarnation of a task, and every waiter hears it: a reused or
 * redriven id never reports an earlier run's outcome, a re-send never detaches a waiter
 * or shortens a keep, every instance that tracks a task is told when it ends, and a
 * finished outcome leaves nothing of the tracker's on the heap.
 */
@WithRedis
class OutcomeIncarnationIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	OutcomeIncarnationIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis, "delayed-tasks.retry.max-retries=0")
			.withUserConfiguration(Handlers.class);
	}

	@Test
	void aReusedIdIsNeverReportedWithThePreviousTasksOutcome() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TrackedTask first = scheduler.track(TaskRequest.of("inc-ok", "first").id("reused-1"));
			assertThat(first.await(WAIT))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(Kind.SUCCEEDED));

			TrackedTask second = scheduler
				.track(TaskRequest.of("inc-ok", "second").id("reused-1").delay(Duration.ofHours(1)));

			assertThat(scheduler.outcome("inc-ok", second.id())).isEmpty();
			assertThat(scheduler.awaitOutcome("inc-ok", second.id(), Duration.ofMillis(300))).isEmpty();
			assertThat(second.outcome()).isNotDone();
			assertThat(scheduler.cancel("inc-ok", second.id())).isTrue();
			assertThat(second.await(WAIT))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(Kind.CANCELLED));
		});
	}

	@Test
	void aRedrivenDeadLetterNoLongerReportsItsDeadLetteredOutcome() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TrackedTask failed = scheduler.track(TaskRequest.of("inc-failing", "x"));
			assertThat(failed.await(WAIT))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(Kind.DEAD_LETTERED));
			context.getBean(QueueControl.class).pause("inc-failing");

			assertThat(context.getBean(DeadLetters.class).redrive("inc-failing", failed.id())).isTrue();

			assertThat(scheduler.outcome("inc-failing", failed.id())).isEmpty();
			assertThat(scheduler.awaitOutcome("inc-failing", failed.id(), Duration.ofMillis(300))).isEmpty();
		});
	}

	@Test
	void reSendingAnExistingIdNeitherDetachesItsTrackerNorShortensItsKeep() {
		this.runner.withPropertyValues("delayed-tasks.queues.inc-ok.results.retention=2m").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TrackedTask tracked = scheduler
				.track(TaskRequest.of("inc-ok", "tracked").id("resent-1").delay(Duration.ofHours(1)));

			TaskId again = scheduler.submit(TaskRequest.of("inc-ok", "untracked").id("resent-1")).id();

			assertThat(again).isEqualTo(tracked.id());
			Map<Object, Object> task = context.getBean(StringRedisTemplate.class)
				.opsForHash()
				.entries(keys("inc-ok").task("resent-1"));
			assertThat(Long.parseLong((String) task.get("or"))).isGreaterThanOrEqualTo(Duration.ofHours(1).toMillis());
			assertThat((String) task.get("tn")).isNotBlank();
			assertThat(scheduler.cancel("inc-ok", tracked.id())).isTrue();
			assertThat(tracked.await(WAIT))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(Kind.CANCELLED));
			long ttl = context.getBean(StringRedisTemplate.class)
				.getExpire(keys("inc-ok").outcome("resent-1"), TimeUnit.SECONDS);
			assertThat(ttl).isGreaterThan(Duration.ofMinutes(30).toSeconds());
		});
	}

	@Test
	void everyInstanceThatTracksATaskIsToldWhenItEnds() {
		this.runner.run((first) -> this.runner.run((second) -> {
			DelayedTaskScheduler scheduler = first.getBean(DelayedTaskScheduler.class);
			TrackedTask tracked = scheduler.track(TaskRequest.of("inc-ok", "both").delay(Duration.ofHours(1)));
			CompletableFuture<Optional<TaskOutcome>> other = CompletableFuture.supplyAsync(
					() -> second.getBean(DelayedTaskScheduler.class).awaitOutcome("inc-ok", tracked.id(), WAIT));
			StringRedisTemplate redis = first.getBean(StringRedisTemplate.class);
			await().atMost(WAIT).until(() -> {
				Object channels = redis.opsForHash().get(keys("inc-ok").task(tracked.id().value()), "tn");
				return channels != null && channels.toString().split(" ").length == 2;
			});

			assertThat(scheduler.cancel("inc-ok", tracked.id())).isTrue();

			assertThat(tracked.await(WAIT))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(Kind.CANCELLED));
			assertThat(other.get(WAIT.toSeconds(), TimeUnit.SECONDS))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(Kind.CANCELLED));
		}));
	}

	@Test
	void aRecurringOccurrenceCreatedAgainNeverReportsTheEarlierOnesOutcome() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			RecurringTasks recurring = context.getBean(RecurringTasks.class);
			recurring.upsert(RecurringSchedule.fixedRate("inc-hourly", "inc-ok", Duration.ofHours(1)));
			Set<String> scheduled = context.getBean(StringRedisTemplate.class)
				.opsForZSet()
				.range(keys("inc-ok").sched(), 0, -1);
			TaskId occurrence = TaskId
				.of(scheduled.stream().filter((id) -> id.startsWith("inc-hourly:")).findFirst().orElseThrow());
			// A waiter asks it to keep its outcome; the cancel records one.
			assertThat(scheduler.awaitOutcome("inc-ok", occurrence, Duration.ofMillis(100))).isEmpty();
			assertThat(scheduler.cancel("inc-ok", occurrence)).isTrue();
			assertThat(scheduler.outcome("inc-ok", occurrence)).isPresent();

			assertThat(recurring.pause("inc-hourly")).isTrue();
			assertThat(recurring.resume("inc-hourly")).isTrue();

			assertThat(scheduler.find("inc-ok", occurrence)).isPresent();
			assertThat(scheduler.outcome("inc-ok", occurrence)).isEmpty();
		});
	}

	@Test
	void aLaterWaiterHasAWaitOfItsOwn() {
		this.runner.withPropertyValues("delayed-tasks.results.tracked-retention=2s").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId id = scheduler.schedule(TaskRequest.of("inc-ok", "live").id("live-1").delay(Duration.ofHours(1)));
			assertThat(scheduler.awaitOutcome("inc-ok", id, Duration.ofMillis(1500))).isEmpty();
			Thread.sleep(200);

			// Past the first call's longest wait: its deadline is not this call's.
			assertThat(scheduler.awaitOutcome("inc-ok", id, Duration.ofMillis(1500))).isEmpty();
		});
	}

	@Test
	void anAwaitLongerThanTheTrackedRetentionReturnsEmptyAtItsTimeout() {
		this.runner.withPropertyValues("delayed-tasks.results.tracked-retention=1s").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId id = scheduler.schedule(TaskRequest.of("inc-ok", "live").id("long-1").delay(Duration.ofHours(1)));

			assertThat(scheduler.awaitOutcome("inc-ok", id, Duration.ofMillis(2500))).isEmpty();
		});
	}

	@Test
	void aFinishedTrackedTaskLeavesNothingOfTheTrackersOnTheHeap() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			List<WeakReference<TaskOutcome>> finished = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				TrackedTask tracked = scheduler.track(TaskRequest.of("inc-ok", "run-" + i));
				finished.add(new WeakReference<>(tracked.await(WAIT).orElseThrow()));
			}
			// Waiting for a task that does not exist fails at once, and is forgotten too.
			assertThat(scheduler.awaitOutcome("inc-ok", TaskId.of("no-such-task"), WAIT)).isEmpty();

			await().atMost(WAIT).until(() -> {
				System.gc();
				return finished.stream().allMatch((reference) -> reference.get() == null);
			});
		});
	}

	private PartitionKeys keys(String queue) {
		return PartitionKeys.of(this.redis.keyPrefix(), queue);
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@DelayedTaskHandler(queue = "inc-ok")
		String ok(String payload) {
			return payload.toUpperCase();
		}

		@DelayedTaskHandler(queue = "inc-failing")
		void failing(String payload) {
			throw new NonRetryableTaskException("refused: " + payload);
		}

	}

}

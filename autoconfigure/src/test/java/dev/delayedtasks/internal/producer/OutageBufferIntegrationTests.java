package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.ReactiveDelayedTaskScheduler;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The outage buffer with a real {@code redis-server} of this test's own that stops
 * answering ({@code SIGSTOP}) or dies and comes back: tasks submitted meanwhile are held,
 * counted by the gauge, and stored in order with the delay they were asked for once Redis
 * is back; past {@code max-tasks} a submission fails at once, past {@code max-wait} a
 * held task fails, and the blocking API keeps failing fast.
 */
@WithRedis(privateServer = true)
@ExtendWith(OutputCaptureExtension.class)
class OutageBufferIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final StoppableRedis stoppable;

	OutageBufferIntegrationTests(TestRedis redis) {
		this.stoppable = new StoppableRedis(redis);
	}

	@Test
	void tasksSubmittedWhileRedisIsStoppedAreHeldAndStoredInOrderWithTheirDelaysWhenItResumes(CapturedOutput output) {
		String queue = "buffer-stopped";
		RedisProcess server = this.stoppable.server();
		this.stoppable.runner("spring.data.redis.timeout=500ms").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			ReactiveDelayedTaskScheduler reactive = context.getBean(ReactiveDelayedTaskScheduler.class);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			scheduler.scheduleAsync(queue, "before", Duration.ofMinutes(5)).get(10, TimeUnit.SECONDS);
			List<CompletableFuture<TaskId>> immediate = new ArrayList<>();
			List<CompletableFuture<TaskId>> delayed = new ArrayList<>();
			Instant submittedAt;
			StoppableRedis.signal("STOP", server);
			try {
				submittedAt = Instant.now();
				for (int i = 0; i < 100; i++) {
					immediate.add(scheduler.scheduleAsync(queue, "now-" + i, Duration.ZERO));
				}
				for (int i = 0; i < 100; i++) {
					delayed.add((i % 2 == 0) ? scheduler.scheduleAsync(queue, "later-" + i, Duration.ofMinutes(5))
							: reactive.schedule(queue, "later-" + i, Duration.ofMinutes(5)).toFuture());
				}
				long blockingStart = System.nanoTime();
				assertThatExceptionOfType(TaskStoreException.class)
					.isThrownBy(() -> scheduler.schedule(queue, "blocking", Duration.ofMinutes(5)));
				assertThat(Duration.ofNanos(System.nanoTime() - blockingStart)).isLessThan(Duration.ofSeconds(5));
				// Several command timeouts and retries while Redis is stopped.
				Thread.sleep(2000);
				assertThat(immediate).noneMatch(CompletableFuture::isDone);
				assertThat(delayed).noneMatch(CompletableFuture::isDone);
				assertThat(meters.get("delayed.tasks.producer.buffered").gauge().value()).isEqualTo(200);
				assertThat(output).contains("Redis is unreachable: the tasks of queue '" + queue + "' are held");
			}
			finally {
				StoppableRedis.signal("CONT", server);
			}
			List<TaskId> immediateIds = new ArrayList<>();
			for (CompletableFuture<TaskId> future : immediate) {
				immediateIds.add(future.get(WAIT.toSeconds(), TimeUnit.SECONDS));
			}
			for (CompletableFuture<TaskId> future : delayed) {
				TaskInfo info = scheduler.find(queue, future.get(WAIT.toSeconds(), TimeUnit.SECONDS)).orElseThrow();
				assertThat(info.state()).isEqualTo(TaskState.SCHEDULED);
				// Due five minutes after the call, not after Redis came back (2 s later).
				assertThat(info.dueAt()).isBetween(submittedAt.plus(Duration.ofMinutes(5)).minusMillis(500),
						submittedAt.plus(Duration.ofMinutes(5)).plusMillis(1000));
			}
			// In the order they were submitted: ready tasks are listed as they were
			// stored.
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			List<String> ready = redis.opsForList()
				.range(context.getBean(StoreSettings.class).keys(queue).ready(), 0, -1);
			assertThat(ready).containsExactlyElementsOf(immediateIds.stream().map(TaskId::value).toList());
			assertThat(meters.get("delayed.tasks.producer.buffered").gauge().value()).isZero();
			assertThat(output).contains("Redis is reachable again: queue '" + queue + "' sends the tasks it held");
		});
	}

	@Test
	void tasksSubmittedWhileRedisIsDeadAreStoredWhenItIsRestarted() {
		String queue = "buffer-killed";
		RedisProcess server = this.stoppable.server();
		this.stoppable.runner("spring.data.redis.timeout=500ms").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduler.scheduleAsync(queue, "before", Duration.ofMinutes(5)).get(10, TimeUnit.SECONDS);
			List<CompletableFuture<TaskId>> futures = new ArrayList<>();
			server.kill();
			try {
				for (int i = 0; i < 50; i++) {
					futures.add(scheduler.submitAsync(TaskRequest.of(queue, "held-" + i).id("held-" + i))
						.thenApply((result) -> result.id()));
				}
				Thread.sleep(1500);
				assertThat(futures).noneMatch(CompletableFuture::isDone);
			}
			finally {
				server.restart();
			}
			for (int i = 0; i < futures.size(); i++) {
				assertThat(futures.get(i).get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(TaskId.of("held-" + i));
				assertThat(scheduler.find(queue, TaskId.of("held-" + i))).isPresent();
			}
		});
	}

	@Test
	void aSubmissionBeyondMaxTasksFailsAtOnceAndTheHeldOnesAreStoredLater() {
		String queue = "buffer-full";
		RedisProcess server = this.stoppable.server();
		this.stoppable.runner("spring.data.redis.timeout=500ms", "delayed-tasks.producer.outage-buffer.max-tasks=50")
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				scheduler.scheduleAsync(queue, "before", Duration.ofMinutes(5)).get(10, TimeUnit.SECONDS);
				List<CompletableFuture<TaskId>> held = new ArrayList<>();
				server.kill();
				try {
					for (int i = 0; i < 50; i++) {
						held.add(scheduler.scheduleAsync(queue, "held-" + i, Duration.ofMinutes(5)));
					}
					for (int i = 0; i < 10; i++) {
						TaskId id = TaskId.of("refused-" + i);
						CompletableFuture<TaskId> refused = scheduler
							.submitAsync(TaskRequest.of(queue, "refused").id(id.value()))
							.thenApply((result) -> result.id());
						assertThat(refused).isCompletedExceptionally();
						assertThatExceptionOfType(ExecutionException.class).isThrownBy(refused::get)
							.havingCause()
							.isInstanceOfSatisfying(TaskStoreException.class,
									(ex) -> assertThat(ex.getTaskId()).isEqualTo(id))
							.withMessageContaining(id.value())
							.withMessageContaining("delayed-tasks.producer.outage-buffer.max-tasks");
					}
					assertThat(meters.get("delayed.tasks.producer.buffered").gauge().value()).isEqualTo(50);
				}
				finally {
					server.restart();
				}
				for (CompletableFuture<TaskId> future : held) {
					assertThat(scheduler.find(queue, future.get(WAIT.toSeconds(), TimeUnit.SECONDS))).isPresent();
				}
				assertThat(scheduler.find(queue, TaskId.of("refused-0"))).isEmpty();
			});
	}

	@Test
	void aHeldTaskFailsWhenMaxWaitIsOverEvenWhileACallWaitsForItsLongerTimeout() {
		String queue = "buffer-expiry";
		RedisProcess server = this.stoppable.server();
		this.stoppable.runner("spring.data.redis.timeout=6s", "delayed-tasks.producer.outage-buffer.max-wait=1s")
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				scheduler.scheduleAsync(queue, "before", Duration.ofMinutes(5)).get(10, TimeUnit.SECONDS);
				List<CompletableFuture<TaskId>> waiting = new ArrayList<>();
				StoppableRedis.signal("STOP", server);
				try {
					// The first goes out and waits for the 6 s timeout; the others wait
					// behind
					// it.
					CompletableFuture<TaskId> inFlight = scheduler.scheduleAsync(queue, "first", Duration.ofMinutes(5));
					long start = System.nanoTime();
					for (int i = 0; i < 20; i++) {
						waiting.add(scheduler.submitAsync(TaskRequest.of(queue, "waiting").id("waiting-" + i))
							.thenApply((result) -> result.id()));
					}
					for (CompletableFuture<TaskId> future : waiting) {
						assertThatExceptionOfType(ExecutionException.class)
							.isThrownBy(() -> future.get(WAIT.toSeconds(), TimeUnit.SECONDS))
							.havingCause()
							.isInstanceOf(TaskStoreException.class)
							.withMessageContaining("was not stored")
							.withMessageContaining("delayed-tasks.producer.outage-buffer.max-wait");
					}
					Duration failedAfter = Duration.ofNanos(System.nanoTime() - start);
					assertThat(failedAfter).isBetween(Duration.ofMillis(900), Duration.ofSeconds(4));
					assertThat(context.getBean(MeterRegistry.class)
						.get("delayed.tasks.producer.abandoned")
						.tag("queue", queue)
						.counter()
						.count()).isEqualTo(20);
					assertThat(inFlight).isNotDone();
					// Its call times out after 6 s: past its wait, it fails then.
					assertThatExceptionOfType(ExecutionException.class)
						.isThrownBy(() -> inFlight.get(WAIT.toSeconds(), TimeUnit.SECONDS))
						.havingCause()
						.isInstanceOf(TaskStoreException.class);
				}
				finally {
					StoppableRedis.signal("CONT", server);
				}
				// Never sent: not stored once Redis answers again.
				await().atMost(WAIT)
					.ignoreExceptions()
					.untilAsserted(() -> assertThat(scheduler.find(queue, TaskId.of("waiting-0"))).isEmpty());
				for (int i = 0; i < 20; i++) {
					assertThat(scheduler.find(queue, TaskId.of("waiting-" + i))).isEmpty();
				}
			});
	}

	@Test
	void aHeldTaskWhoseCallTimedOutAfterItWasSentIsNotReportedAsNotStored() {
		String queue = "buffer-uncertain";
		RedisProcess server = this.stoppable.server();
		this.stoppable.runner("spring.data.redis.timeout=300ms", "delayed-tasks.producer.outage-buffer.max-wait=1500ms")
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				scheduler.scheduleAsync(queue, "before", Duration.ofMinutes(5)).get(10, TimeUnit.SECONDS);
				CompletableFuture<ScheduleResult> sent;
				StoppableRedis.signal("STOP", server);
				try {
					// Sent to a stopped Redis, which runs it when it resumes.
					sent = scheduler.submitAsync(TaskRequest.of(queue, "sent").id("sent-1"));
					assertThatExceptionOfType(ExecutionException.class)
						.isThrownBy(() -> sent.get(WAIT.toSeconds(), TimeUnit.SECONDS))
						.havingCause()
						.isInstanceOfSatisfying(TaskStoreException.class,
								(ex) -> assertThat(ex.getTaskId()).isEqualTo(TaskId.of("sent-1")))
						.withMessageContaining("may have been stored")
						.withMessageNotContaining("was not stored");
				}
				finally {
					StoppableRedis.signal("CONT", server);
				}
				await().atMost(WAIT)
					.ignoreExceptions()
					.untilAsserted(() -> assertThat(scheduler.find(queue, TaskId.of("sent-1"))).isPresent());
			});
	}

	@Test
	void aTaskCancelledWhileHeldIsShownAsHeldAndNeverStoredEvenWhenItsCallRunsLater() {
		String queue = "buffer-cancel";
		RedisProcess server = this.stoppable.server();
		this.stoppable.runner("spring.data.redis.timeout=300ms").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduler.scheduleAsync(queue, "before", Duration.ofMinutes(5)).get(10, TimeUnit.SECONDS);
			CompletableFuture<ScheduleResult> inFlight;
			CompletableFuture<ScheduleResult> waiting;
			CompletableFuture<ScheduleResult> kept;
			StoppableRedis.signal("STOP", server);
			try {
				// Written to the stopped Redis, which runs it when it resumes.
				inFlight = scheduler.submitAsync(TaskRequest.of(queue, "in-flight").id("in-flight"));
				waiting = scheduler.submitAsync(TaskRequest.of(queue, "waiting").id("waiting"));
				kept = scheduler.submitAsync(TaskRequest.of(queue, "kept").id("kept").delay(Duration.ofMinutes(5)));
				// Held: its first call timed out, and retries are sent to the stopped
				// Redis too.
				Thread.sleep(1000);
				TaskInfo held = scheduler.find(queue, TaskId.of("waiting")).orElseThrow();
				assertThat(held.state()).isEqualTo(TaskState.HELD);
				assertThat(scheduler.findAsync(queue, TaskId.of("kept")).get(1, TimeUnit.SECONDS).orElseThrow().state())
					.isEqualTo(TaskState.HELD);
				long start = System.nanoTime();
				assertThat(scheduler.cancel(queue, TaskId.of("in-flight"))).isTrue();
				assertThat(scheduler.cancelAsync(queue, TaskId.of("waiting")).get(1, TimeUnit.SECONDS)).isTrue();
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(250));
				for (CompletableFuture<ScheduleResult> future : List.of(inFlight, waiting)) {
					assertThatExceptionOfType(CancellationException.class)
						.isThrownBy(() -> future.get(1, TimeUnit.SECONDS))
						.withMessageContaining("was cancelled before it was stored");
				}
			}
			finally {
				StoppableRedis.signal("CONT", server);
			}
			// Created by a retry that timed out in the socket of the stopped Redis, so
			// perhaps answered EXISTING by the retry after it.
			assertThat(kept.get(WAIT.toSeconds(), TimeUnit.SECONDS).id()).isEqualTo(TaskId.of("kept"));
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			StoreSettings settings = context.getBean(StoreSettings.class);
			// The call that carried them ran when Redis resumed; the cancels ran after
			// it.
			await().atMost(WAIT).untilAsserted(() -> {
				assertThat(context.getBean(RedisDelayedTaskScheduler.class).bufferedTasks()).isZero();
				assertThat(redis.opsForHash().get(settings.keys(queue).stats(), "canceled")).isNotNull();
			});
			assertThat(scheduler.find(queue, TaskId.of("in-flight"))).isEmpty();
			assertThat(scheduler.find(queue, TaskId.of("waiting"))).isEmpty();
			assertThat(scheduler.find(queue, TaskId.of("kept")).orElseThrow().state()).isEqualTo(TaskState.SCHEDULED);
			for (String id : List.of("in-flight", "waiting")) {
				assertThat(redis.opsForHash().get(settings.keys(queue).task(id), "s")).isIn(null, "X");
				assertThat(redis.hasKey(settings.keys(queue).payload(id))).isFalse();
			}
		});
	}

	@Test
	void stoppingWithHeldTasksGivesThemTheShutdownWaitThenFailsAndReportsEachOne(CapturedOutput output) {
		String queue = "buffer-shutdown";
		RedisProcess server = this.stoppable.server();
		List<String> abandoned = new CopyOnWriteArrayList<>();
		DelayedTaskListener listener = new DelayedTaskListener() {

			@Override
			public void storeAbandoned(String queue, TaskId id, TaskStoreException failure) {
				abandoned.add(id.value());
			}

		};
		this.stoppable
			.runner("spring.data.redis.timeout=300ms", "delayed-tasks.producer.outage-buffer.shutdown-wait=1s")
			.withBean(DelayedTaskListener.class, () -> listener)
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				assertThat(context).hasSingleBean(ProducerLifecycle.class);
				scheduler.scheduleAsync(queue, "before", Duration.ofMinutes(5)).get(10, TimeUnit.SECONDS);
				List<CompletableFuture<ScheduleResult>> held = new ArrayList<>();
				StoppableRedis.signal("STOP", server);
				try {
					for (int i = 0; i < 3; i++) {
						held.add(scheduler.submitAsync(TaskRequest.of(queue, "held").id("held-" + i)));
					}
					Thread.sleep(500);
					long start = System.nanoTime();
					context.close();
					assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(900),
							Duration.ofSeconds(5));
					for (CompletableFuture<ScheduleResult> future : held) {
						assertThatExceptionOfType(ExecutionException.class)
							.isThrownBy(() -> future.get(1, TimeUnit.SECONDS))
							.havingCause()
							.isInstanceOf(TaskStoreException.class)
							.withMessageContaining("the application stopped before Redis confirmed it");
					}
					assertThat(abandoned).containsExactlyInAnyOrder("held-0", "held-1", "held-2");
					assertThat(output).contains("Stopping with 3 task(s) of queue '" + queue + "'")
						.contains("held-0, held-1, held-2");
				}
				finally {
					StoppableRedis.signal("CONT", server);
				}
			});
	}

	@Test
	void stoppingWhileRedisAnswersStoresTheAcceptedTasksFirst() {
		String queue = "buffer-shutdown-drain";
		List<CompletableFuture<ScheduleResult>> accepted = new ArrayList<>();
		this.stoppable.runner().run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			for (int i = 0; i < 2000; i++) {
				accepted.add(scheduler.submitAsync(TaskRequest.of(queue, "task").id("drain-" + i)));
			}
			context.close();
			assertThat(accepted).allMatch((future) -> future.isDone() && !future.isCompletedExceptionally());
		});
		this.stoppable.runner()
			.run((context) -> assertThat(context.getBean(DelayedTaskScheduler.class)
				.find(queue, TaskId.of("drain-1999"))
				.orElseThrow()
				.state()).isEqualTo(TaskState.READY));
	}

	@Test
	void aCommandTimeoutNotBelowMaxWaitIsReportedAtStartUp(CapturedOutput output) {
		this.stoppable.runner("delayed-tasks.producer.outage-buffer.max-wait=30s").run((context) -> {
			assertThat(context).hasNotFailed();
			// Lettuce's default command timeout, 60 s.
			assertThat(output).contains("The outage buffer's max-wait (PT30S) is not longer than the Redis command"
					+ " timeout (PT1M, spring.data.redis.timeout)");
		});
	}

	@Test
	void aCommandTimeoutBelowMaxWaitIsNotReported(CapturedOutput output) {
		this.stoppable.runner("spring.data.redis.timeout=2s").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).doesNotContain("The outage buffer's max-wait");
		});
	}

}

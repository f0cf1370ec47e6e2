package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The outage buffer's promises (docs/scheduling.md) on the paths where they are easiest
 * to break: the same id held twice, a stop with a call in flight, many queues.
 */
@WithRedis(privateServer = true)
@ExtendWith(OutputCaptureExtension.class)
class OutageBufferWithdrawalIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final StoppableRedis stoppable;

	OutageBufferWithdrawalIntegrationTests(TestRedis redis) {
		this.stoppable = new StoppableRedis(redis);
	}

	/**
	 * "was not stored is said only when known": stop the application while the first call
	 * of a task is in flight to a SIGSTOPped Redis (command timeout longer than the
	 * shutdown wait). The call was handed to the client, so the task may be stored; after
	 * SIGCONT it is.
	 */
	@Test
	void stopWithTheFirstCallInFlightMustNotSayWasNotStored(CapturedOutput output) throws Exception {
		String queue = "wd-stop-inflight";
		RedisProcess server = this.stoppable.server();
		List<TaskStoreException> abandoned = new CopyOnWriteArrayList<>();
		DelayedTaskListener listener = new DelayedTaskListener() {

			@Override
			public void storeAbandoned(String queue, TaskId id, TaskStoreException failure) {
				abandoned.add(failure);
			}

		};
		CompletableFuture<ScheduleResult>[] sent = new CompletableFuture[1];
		this.stoppable
			.runner("spring.data.redis.timeout=10s", "delayed-tasks.producer.outage-buffer.max-wait=30s",
					"delayed-tasks.producer.outage-buffer.shutdown-wait=1s")
			.withBean(DelayedTaskListener.class, () -> listener)
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				scheduler.scheduleAsync(queue, "before", Duration.ofMinutes(5)).get(10, TimeUnit.SECONDS);
				StoppableRedis.signal("STOP", server);
				try {
					sent[0] = scheduler
						.submitAsync(TaskRequest.of(queue, "x").id("inflight-1").delay(Duration.ofMinutes(5)));
					Thread.sleep(300);
					context.close();
				}
				finally {
					StoppableRedis.signal("CONT", server);
				}
			});
		Throwable cause = null;
		try {
			sent[0].get(5, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			cause = ex.getCause();
		}
		Thread.sleep(1000);
		Optional<TaskInfo>[] found = new Optional[1];
		this.stoppable.runner()
			.run((context) -> found[0] = context.getBean(DelayedTaskScheduler.class)
				.find(queue, TaskId.of("inflight-1")));
		assertThat(cause).isInstanceOf(TaskStoreException.class);
		assertThat(abandoned).singleElement()
			.satisfies((failure) -> assertThat(failure.getMessage()).contains("may have been stored"));
		if (found[0].isPresent()) {
			// The task is in Redis: the failure must not have said it was not.
			assertThat(cause.getMessage()).doesNotContain("was not stored").contains("may have been stored");
		}
		assertThat(cause.getMessage()).doesNotContain("was not stored");
	}

	/**
	 * "cancel withdraws it at once and for good": the docs say sending the same id again
	 * is safe; two held submissions of one id, then one cancel of that id.
	 */
	@Test
	void cancelOfAnIdHeldTwiceWithdrawsBoth() throws Exception {
		String queue = "wd-cancel-twice";
		RedisProcess server = this.stoppable.server();
		this.stoppable.runner("spring.data.redis.timeout=300ms").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduler.scheduleAsync(queue, "before", Duration.ofMinutes(5)).get(10, TimeUnit.SECONDS);
			CompletableFuture<ScheduleResult> first;
			CompletableFuture<ScheduleResult> again;
			boolean cancelled;
			StoppableRedis.signal("STOP", server);
			try {
				first = scheduler.submitAsync(TaskRequest.of(queue, "a").id("dup").delay(Duration.ofMinutes(5)));
				again = scheduler.submitAsync(TaskRequest.of(queue, "a").id("dup").delay(Duration.ofMinutes(5)));
				Thread.sleep(1000);
				cancelled = scheduler.cancel(queue, TaskId.of("dup"));
				// Neither is held any more: find asks Redis, which does not answer.
				assertThatExceptionOfType(TaskStoreException.class)
					.isThrownBy(() -> scheduler.find(queue, TaskId.of("dup")));
			}
			finally {
				StoppableRedis.signal("CONT", server);
			}
			await().atMost(WAIT)
				.untilAsserted(
						() -> assertThat(context.getBean(RedisDelayedTaskScheduler.class).bufferedTasks()).isZero());
			Thread.sleep(500);
			Optional<TaskInfo> stored = scheduler.find(queue, TaskId.of("dup"));
			assertThat(cancelled).isTrue();
			assertThat(first).isCompletedExceptionally();
			assertThat(again).isCompletedExceptionally();
			assertThat(stored).as("task 'dup' in Redis after a cancel that returned true").isEmpty();
		});
	}

	/**
	 * cancel, then submit the same id again while the first is still in flight to a
	 * stopped Redis. The re-submission is a new task and must be stored.
	 */
	@Test
	void cancelThenResubmitWhileTheFirstIsInFlight() throws Exception {
		String queue = "wd-cancel-resubmit";
		RedisProcess server = this.stoppable.server();
		this.stoppable.runner("spring.data.redis.timeout=5s").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduler.scheduleAsync(queue, "before", Duration.ofMinutes(5)).get(10, TimeUnit.SECONDS);
			CompletableFuture<ScheduleResult> first;
			CompletableFuture<ScheduleResult> second;
			StoppableRedis.signal("STOP", server);
			try {
				first = scheduler.submitAsync(TaskRequest.of(queue, "a").id("re").delay(Duration.ofMinutes(5)));
				Thread.sleep(200);
				assertThat(scheduler.cancel(queue, TaskId.of("re"))).isTrue();
				second = scheduler.submitAsync(TaskRequest.of(queue, "b").id("re").delay(Duration.ofMinutes(5)));
				assertThat(scheduler.find(queue, TaskId.of("re")).orElseThrow().state()).isEqualTo(TaskState.HELD);
			}
			finally {
				StoppableRedis.signal("CONT", server);
			}
			ScheduleResult result = second.get(WAIT.toSeconds(), TimeUnit.SECONDS);
			await().atMost(WAIT)
				.untilAsserted(
						() -> assertThat(context.getBean(RedisDelayedTaskScheduler.class).bufferedTasks()).isZero());
			assertThat(scheduler.find(queue, TaskId.of("re"))).isPresent();
		});
	}

	/**
	 * an id stored before (an older incarnation), a new submission of it held, then
	 * cancel: the id must be gone in Redis, and stay gone.
	 */
	@Test
	void cancelOfAStoredIdWhileANewSubmissionIsHeld() throws Exception {
		String queue = "wd-cancel-older";
		RedisProcess server = this.stoppable.server();
		this.stoppable.runner("spring.data.redis.timeout=300ms").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduler.submitAsync(TaskRequest.of(queue, "old").id("older").delay(Duration.ofMinutes(5)))
				.get(10, TimeUnit.SECONDS);
			CompletableFuture<ScheduleResult> held;
			StoppableRedis.signal("STOP", server);
			try {
				held = scheduler.submitAsync(TaskRequest.of(queue, "new").id("older").delay(Duration.ofMinutes(5)));
				Thread.sleep(800);
				assertThat(scheduler.find(queue, TaskId.of("older")).orElseThrow().state()).isEqualTo(TaskState.HELD);
				assertThat(scheduler.cancel(queue, TaskId.of("older"))).isTrue();
			}
			finally {
				StoppableRedis.signal("CONT", server);
			}
			await().atMost(WAIT)
				.untilAsserted(
						() -> assertThat(context.getBean(RedisDelayedTaskScheduler.class).bufferedTasks()).isZero());
			Thread.sleep(500);
			assertThat(scheduler.find(queue, TaskId.of("older"))).isEmpty();
		});
	}

	/**
	 * "many queues": past 1,024 queues with a lane, a task is neither held through an
	 * outage nor shown HELD / withdrawn by cancel.
	 */
	@Test
	void manyQueuesTheBufferStillHoldsTheTask() throws Exception {
		RedisProcess server = this.stoppable.server();
		this.stoppable.runner("spring.data.redis.timeout=300ms", "delayed-tasks.producer.outage-buffer.max-wait=20s")
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				List<CompletableFuture<TaskId>> futures = new ArrayList<>();
				for (int i = 0; i < 1024; i++) {
					futures.add(scheduler.scheduleAsync("wd-q-" + i, "x", Duration.ofMinutes(5)));
				}
				for (CompletableFuture<TaskId> future : futures) {
					future.get(WAIT.toSeconds(), TimeUnit.SECONDS);
				}
				CompletableFuture<ScheduleResult> lastQueue;
				CompletableFuture<ScheduleResult> firstQueue;
				Optional<TaskInfo> heldView;
				StoppableRedis.signal("STOP", server);
				try {
					firstQueue = scheduler
						.submitAsync(TaskRequest.of("wd-q-0", "x").id("in-q0").delay(Duration.ofMinutes(5)));
					lastQueue = scheduler
						.submitAsync(TaskRequest.of("wd-q-1024", "x").id("in-q1024").delay(Duration.ofMinutes(5)));
					Thread.sleep(1500);
					Optional<TaskInfo> view;
					try {
						view = scheduler.find("wd-q-1024", TaskId.of("in-q1024"));
					}
					catch (RuntimeException ex) {
						view = Optional.empty();
					}
					heldView = view;
				}
				finally {
					StoppableRedis.signal("CONT", server);
				}
				assertThat(firstQueue.isDone()).isFalse();
				assertThat(lastQueue.isDone()).as("a task of the 1,025th queue is held like the others").isFalse();
				assertThat(heldView).as("find shows it HELD").isPresent();
			});
	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.store.Lease;
import dev.delayedtasks.internal.store.TaskStore.AckOutcome;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The completion path records every outcome it was handed before it stops.
 */
class CompletionsTests {

	private static final WorkerSettings SETTINGS = new WorkerSettings(Duration.ofSeconds(30), Duration.ofSeconds(5),
			Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofSeconds(5), true, 32);

	@Test
	void stopWaitsForTheAcknowledgementInProgressInsteadOfInterruptingIt() throws Exception {
		ScriptedTaskStore store = new ScriptedTaskStore();
		CountDownLatch ackEntered = new CountDownLatch(1);
		CountDownLatch redisAnswers = new CountDownLatch(1);
		AtomicBoolean interrupted = new AtomicBoolean();
		store.ack = (leases) -> {
			ackEntered.countDown();
			try {
				// A slow Redis: the acknowledgement is on the wire.
				redisAnswers.await();
			}
			catch (InterruptedException ex) {
				interrupted.set(true);
				throw new IllegalStateException("Redis command interrupted");
			}
			return Collections.nCopies(leases.size(), AckOutcome.DONE);
		};
		LeaseHeartbeat heartbeat = new LeaseHeartbeat("q", store, SETTINGS);
		Completions completions = new Completions("q", store, heartbeat, new Listeners(List.of()));
		completions.start(new QueueThreads("q"));
		ActiveRun run = heartbeat.track(new Lease(TaskId.of("t1"), "token", null), context("t1"), System.nanoTime(),
				() -> {
				});
		run.finish();
		completions.succeeded(run, Duration.ofMillis(5), null);
		assertThat(ackEntered.await(5, TimeUnit.SECONDS)).isTrue();
		// The queue is empty now, but the outcome is not recorded yet.
		Thread stopper = new Thread(() -> completions.stop(System.nanoTime() + Duration.ofSeconds(5).toNanos()));
		stopper.start();
		// Stop is under way (waiting), and keeps waiting instead of interrupting the
		// acknowledgement.
		await().atMost(Duration.ofSeconds(5))
			.until(() -> stopper.getState() == Thread.State.WAITING
					|| stopper.getState() == Thread.State.TIMED_WAITING);
		await().during(Duration.ofSeconds(1))
			.atMost(Duration.ofSeconds(2))
			.until(() -> stopper.isAlive() && !interrupted.get());
		redisAnswers.countDown();
		stopper.join(5000);
		assertThat(stopper.isAlive()).isFalse();
		assertThat(interrupted).isFalse();
		assertThat(store.acknowledged).extracting(Lease::id).containsExactly(TaskId.of("t1"));
		assertThat(heartbeat.active()).isEmpty();
		assertThat(completions.isIdle()).isTrue();
	}

	static TaskContext context(String id) {
		Instant now = Instant.now();
		return new TaskContext(TaskId.of(id), "q", 1, 1, now, now, now, Map.of(), "token");
	}

}

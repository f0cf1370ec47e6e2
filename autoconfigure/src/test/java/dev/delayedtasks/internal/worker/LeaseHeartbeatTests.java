package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.store.Lease;
import dev.delayedtasks.internal.store.TaskStore.ExtendOutcome;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a heartbeat does with the outcomes of extending leases.
 */
class LeaseHeartbeatTests {

	private static final WorkerSettings SETTINGS = new WorkerSettings(Duration.ofSeconds(30), Duration.ofSeconds(5),
			Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofSeconds(5), true, 32);

	@Test
	void lostLeaseOfARunningHandlerInterruptsIt() throws Exception {
		ScriptedTaskStore store = new ScriptedTaskStore();
		store.extend = (leases) -> List.of(ExtendOutcome.LOST);
		LeaseHeartbeat heartbeat = new LeaseHeartbeat("q", store, SETTINGS);
		ActiveRun run = heartbeat.track(new Lease(TaskId.of("t1"), "token", null), CompletionsTests.context("t1"),
				System.nanoTime(), () -> {
				});
		Thread handler = new Thread(() -> {
			try {
				Thread.sleep(10_000);
			}
			catch (InterruptedException ex) {
				// expected
			}
		});
		handler.start();
		assertThat(run.start(handler)).isTrue();
		heartbeat.beat();
		handler.join(5000);
		assertThat(handler.isAlive()).isFalse();
		assertThat("lease-lost".equals(run.stopReason())).isTrue();
	}

	@Test
	void unstartedRunIsNotExtendedAndIsReleasedOnceItsStartWindowEnds() {
		WorkerSettings shortLease = new WorkerSettings(Duration.ofMillis(300), Duration.ofSeconds(5),
				Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofSeconds(5), true, 32);
		ScriptedTaskStore store = new ScriptedTaskStore();
		List<Lease> extended = new CopyOnWriteArrayList<>();
		store.extend = (leases) -> {
			extended.addAll(leases);
			return Collections.nCopies(leases.size(), ExtendOutcome.EXTENDED);
		};
		LeaseHeartbeat heartbeat = new LeaseHeartbeat("q", store, shortLease);
		AtomicInteger ended = new AtomicInteger();
		// Claimed, but the executor never runs it (a discard policy).
		ActiveRun run = heartbeat.track(new Lease(TaskId.of("t1"), "token", null), CompletionsTests.context("t1"),
				System.nanoTime(), ended::incrementAndGet);
		heartbeat.beat();
		assertThat(extended).as("an unstarted run's lease is not extended").isEmpty();
		assertThat(ended).hasValue(0);
		await().atMost(Duration.ofSeconds(5)).until(() -> run.startOverdueAt(System.nanoTime()));
		assertThat(run.start(Thread.currentThread())).as("started after its start window").isFalse();
		heartbeat.beat();
		assertThat(store.released).extracting(Lease::id).containsExactly(TaskId.of("t1"));
		assertThat(ended).as("hold freed").hasValue(1);
		assertThat(heartbeat.active()).isEmpty();
		assertThat(extended).isEmpty();
		assertThat(run.release()).as("released at shutdown").isFalse();
	}

	@Test
	void leaseRunOutLocallyBeforeTheHandlerStartedEndsTheRunAndTheHandlerNeverStarts() {
		WorkerSettings shortLease = new WorkerSettings(Duration.ofMillis(30), Duration.ofSeconds(5),
				Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofSeconds(5), true, 32);
		LeaseHeartbeat heartbeat = new LeaseHeartbeat("q", new ScriptedTaskStore(), shortLease);
		AtomicInteger ended = new AtomicInteger();
		ActiveRun run = heartbeat.track(new Lease(TaskId.of("t1"), "token", null), CompletionsTests.context("t1"),
				System.nanoTime(), ended::incrementAndGet);
		await().atMost(Duration.ofSeconds(5)).until(() -> run.leaseExpiredAt(System.nanoTime()));
		heartbeat.checkLocalLeases();
		assertThat(ended).hasValue(1);
		assertThat(heartbeat.active()).isEmpty();
		assertThat(run.start(Thread.currentThread())).isFalse();
	}

	@Test
	void runThatFinishedWhileItsLeaseWasExtendedIsNotTreatedAsLost() {
		ScriptedTaskStore store = new ScriptedTaskStore();
		LeaseHeartbeat heartbeat = new LeaseHeartbeat("q", store, SETTINGS);
		ActiveRun run = heartbeat.track(new Lease(TaskId.of("t1"), "token", null), CompletionsTests.context("t1"),
				System.nanoTime(), () -> {
				});
		run.start(Thread.currentThread());
		// The run ends and is acknowledged while the extension is on its way: Redis
		// answers that the lease is gone.
		store.extend = (leases) -> {
			run.finish();
			return List.of(ExtendOutcome.LOST);
		};
		heartbeat.beat();
		assertThat(run.stopReason()).isNull();
	}

	@Test
	void cancelRequestInterruptsTheHandlerAndKeepsTheLease() {
		ScriptedTaskStore store = new ScriptedTaskStore();
		store.extend = (leases) -> List.of(ExtendOutcome.CANCEL_REQUESTED);
		LeaseHeartbeat heartbeat = new LeaseHeartbeat("q", store, SETTINGS);
		ActiveRun run = heartbeat.track(new Lease(TaskId.of("t1"), "token", null), CompletionsTests.context("t1"),
				System.nanoTime(), () -> {
				});
		assertThat(run.start(new Thread(() -> {
		}))).isTrue();
		heartbeat.beat();
		assertThat(run.stopReason()).isEqualTo("cancelled");
		assertThat(run.leaseExpiredAt(System.nanoTime())).isFalse();
	}

	@Test
	void stopLetsGoOfEveryRunStillHeldSoNothingOfThisStartReachesTheNext() {
		LeaseHeartbeat heartbeat = new LeaseHeartbeat("q", new ScriptedTaskStore(), SETTINGS);
		AtomicInteger ended = new AtomicInteger();
		// One returned for release after stop's last release, one whose outcome was not
		// recorded: neither may keep its hold into a later start.
		ActiveRun returned = heartbeat.track(new Lease(TaskId.of("t1"), "token", null), CompletionsTests.context("t1"),
				System.nanoTime(), ended::incrementAndGet);
		ActiveRun finished = heartbeat.track(new Lease(TaskId.of("t2"), "token", null), CompletionsTests.context("t2"),
				System.nanoTime(), ended::incrementAndGet);
		assertThat(returned.start(new Thread(() -> {
		}))).isTrue();
		returned.returnForRelease();
		assertThat(finished.start(new Thread(() -> {
		}))).isTrue();
		assertThat(finished.finish()).isTrue();
		heartbeat.stop();
		assertThat(heartbeat.active()).isEmpty();
		assertThat(ended).hasValue(2);
	}

}

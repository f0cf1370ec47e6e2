package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.TaskStore.AckOutcome;
import dev.delayedtasks.internal.store.TaskStore.ExtendOutcome;
import dev.delayedtasks.internal.store.TaskStore.FailOutcome;
import dev.delayedtasks.internal.store.TaskStore.ReleaseOutcome;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A worker that lost its lease (it was reaped and another worker claimed the task) can
 * neither complete, retry, extend nor release the task: every call with its old token is
 * refused and changes nothing but the {@code stale} counter.
 */
@WithRedis
class FencingIntegrationTests {

	private static final Duration LEASE = Duration.ofMillis(1000);

	private static final Duration GRACE = Duration.ofMillis(200);

	private static final TaskFailure FAILURE = new TaskFailure(Duration.ZERO, FailureReason.NON_RETRYABLE,
			"java.lang.IllegalStateException", "late failure");

	private StoreFixture fixture;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis, new StoreSettings(redis.keyPrefix(), LEASE, GRACE, 10, 500, 100, 16,
				1024 * 1024, Duration.ofDays(14), 100_000, 100, Duration.ofDays(1)));
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void ackWithOldTokenIsStaleAndChangesNothing() {
		Takeover takeover = takeover("fence-ack");
		PartitionProbe probe = takeover.probe();
		Map<String, String> before = probe.snapshot("stale");
		assertThat(this.fixture.store.ack("fence-ack", List.of(takeover.old().lease())))
			.containsExactly(AckOutcome.STALE);
		assertThat(probe.snapshot("stale")).isEqualTo(before);
		assertThat(probe.stat("stale")).isOne();
		assertThat(probe.stat("done")).isZero();
		assertThat(probe.violations()).isEmpty();
		assertThat(this.fixture.store.ack("fence-ack", List.of(takeover.current().lease())))
			.as("the new owner still completes it")
			.containsExactly(AckOutcome.DONE);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void failWithOldTokenIsStaleAndChangesNothing() {
		Takeover takeover = takeover("fence-fail");
		PartitionProbe probe = takeover.probe();
		Map<String, String> before = probe.snapshot("stale");
		FailOutcome outcome = this.fixture.store.fail("fence-fail", takeover.old().lease(), FAILURE);
		assertThat(outcome.kind()).isEqualTo(FailOutcome.Kind.STALE);
		assertThat(outcome.dueMs()).isEqualTo(-1);
		assertThat(probe.snapshot("stale")).isEqualTo(before);
		assertThat(probe.stat("stale")).isOne();
		assertThat(probe.stat("retry")).isZero();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void failWithOldTokenCannotDeadLetterTheTask() {
		Takeover takeover = takeover("fence-fail-dead");
		PartitionProbe probe = takeover.probe();
		Map<String, String> before = probe.snapshot("stale");
		FailOutcome outcome = this.fixture.store.fail("fence-fail-dead", takeover.old().lease(),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, "java.lang.IllegalStateException", "fatal"));
		assertThat(outcome.kind()).isEqualTo(FailOutcome.Kind.STALE);
		assertThat(probe.snapshot("stale")).isEqualTo(before);
		assertThat(probe.dead()).isEmpty();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void extendWithOldTokenIsLostAndChangesNothing() {
		Takeover takeover = takeover("fence-extend");
		PartitionProbe probe = takeover.probe();
		probe.awaitAfter(probe.now());
		Map<String, String> before = probe.snapshot();
		assertThat(this.fixture.store.extend("fence-extend", List.of(takeover.old().lease())))
			.containsExactly(ExtendOutcome.LOST);
		assertThat(probe.snapshot()).as("the lease deadline is not moved, no counter changes").isEqualTo(before);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void releaseWithOldTokenIsLostAndChangesNothingButTheStaleCounter() {
		Takeover takeover = takeover("fence-release");
		PartitionProbe probe = takeover.probe();
		Map<String, String> before = probe.snapshot("stale");
		assertThat(this.fixture.store.release("fence-release", List.of(takeover.old().lease())))
			.containsExactly(ReleaseOutcome.LOST);
		assertThat(probe.snapshot("stale")).isEqualTo(before);
		assertThat(probe.stat("stale")).as("another worker has the task: it ran twice").isOne();
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void tokenFromTheSameDispatcherBeforeTheReapIsStale() {
		PartitionProbe probe = new PartitionProbe(this.fixture, "fence-same-nonce");
		TaskId id = this.fixture.scheduler.enqueue("fence-same-nonce", new Job("x"));
		ClaimBatch first = this.fixture.store.claim("fence-same-nonce", 1, "w1");
		probe.awaitAfter(first.now() + LEASE.toMillis() + GRACE.toMillis());
		ClaimedTask second = this.fixture.store.claim("fence-same-nonce", 1, "w1").tasks().get(0);
		assertThat(second.id()).isEqualTo(id);
		assertThat(first.tasks().get(0).token()).isEqualTo("w1:1");
		assertThat(second.token()).isEqualTo("w1:2");
		Map<String, String> before = probe.snapshot("stale");
		assertThat(this.fixture.store.ack("fence-same-nonce", List.of(first.tasks().get(0).lease())))
			.containsExactly(AckOutcome.STALE);
		assertThat(probe.snapshot("stale")).isEqualTo(before);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void tokenOfAnEarlierTaskWithTheSameIdIsStale() {
		PartitionProbe probe = new PartitionProbe(this.fixture, "fence-recreated");
		Takeover takeover = takeover("fence-recreated");
		TaskId id = takeover.current().id();
		assertThat(this.fixture.store.ack("fence-recreated", List.of(takeover.current().lease())))
			.containsExactly(AckOutcome.DONE);
		assertThat(this.fixture.scheduler.submit(TaskRequest.of("fence-recreated", new Job("again")).id(id)).created())
			.isTrue();
		ClaimedTask recreated = this.fixture.store.claim("fence-recreated", 1, "w1").tasks().get(0);
		assertThat(recreated.id()).isEqualTo(id);
		assertThat(recreated.token()).as("never an earlier lease's token")
			.isNotIn(takeover.old().token(), takeover.current().token());
		Map<String, String> before = probe.snapshot("stale");
		assertThat(this.fixture.store.ack("fence-recreated", List.of(takeover.old().lease())))
			.containsExactly(AckOutcome.STALE);
		assertThat(probe.snapshot("stale")).isEqualTo(before);
		assertThat(probe.task(id.value())).containsEntry("s", "A").containsEntry("k", recreated.token());
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void ackAfterReapBeforeAnotherClaimIsStale() {
		PartitionProbe probe = new PartitionProbe(this.fixture, "fence-reaped");
		TaskId id = this.fixture.scheduler.enqueue("fence-reaped", new Job("x"));
		ClaimBatch batch = this.fixture.store.claim("fence-reaped", 1, "w1");
		probe.awaitAfter(batch.now() + LEASE.toMillis() + GRACE.toMillis());
		this.fixture.store.claim("fence-reaped", 0, "w2");
		assertThat(probe.task(id.value())).containsEntry("s", "R").doesNotContainKey("k");
		Map<String, String> before = probe.snapshot("stale");
		assertThat(this.fixture.store.ack("fence-reaped", List.of(batch.tasks().get(0).lease())))
			.containsExactly(AckOutcome.STALE);
		assertThat(this.fixture.store.fail("fence-reaped", batch.tasks().get(0).lease(), FAILURE).kind())
			.isEqualTo(FailOutcome.Kind.STALE);
		assertThat(this.fixture.store.extend("fence-reaped", List.of(batch.tasks().get(0).lease())))
			.containsExactly(ExtendOutcome.LOST);
		// Back in ready, no lease holds it: nothing another worker runs.
		assertThat(this.fixture.store.release("fence-reaped", List.of(batch.tasks().get(0).lease())))
			.containsExactly(ReleaseOutcome.GONE);
		assertThat(probe.snapshot("stale")).isEqualTo(before);
		assertThat(probe.stat("stale")).isEqualTo(2);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void batchAckRejectsOnlyTheOldToken() {
		PartitionProbe probe = new PartitionProbe(this.fixture, "fence-batch");
		Takeover takeover = takeover("fence-batch");
		TaskId other = this.fixture.scheduler.enqueue("fence-batch", new Job("other"));
		ClaimedTask otherTask = this.fixture.store.claim("fence-batch", 1, "w3").tasks().get(0);
		assertThat(otherTask.id()).isEqualTo(other);
		assertThat(this.fixture.store.ack("fence-batch", List.of(takeover.old().lease(), otherTask.lease())))
			.containsExactly(AckOutcome.STALE, AckOutcome.DONE);
		assertThat(probe.taskKeys(other.value())).isEmpty();
		assertThat(probe.task(takeover.current().id().value())).containsEntry("s", "A")
			.containsEntry("k", takeover.current().token());
		assertThat(probe.stat("stale")).isOne();
		assertThat(probe.stat("done")).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void ackOfCompletedTaskIsGoneNotStale() {
		PartitionProbe probe = new PartitionProbe(this.fixture, "fence-gone");
		this.fixture.scheduler.enqueue("fence-gone", new Job("x"));
		ClaimedTask task = this.fixture.store.claim("fence-gone", 1, "w1").tasks().get(0);
		assertThat(this.fixture.store.ack("fence-gone", List.of(task.lease()))).containsExactly(AckOutcome.DONE);
		Map<String, String> before = probe.snapshot();
		assertThat(this.fixture.store.ack("fence-gone", List.of(task.lease()))).containsExactly(AckOutcome.GONE);
		assertThat(probe.snapshot()).isEqualTo(before);
		assertThat(probe.stat("stale")).isZero();
		assertThat(probe.stat("done")).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void failExtendAndReleaseOfCompletedTaskChangeNothing() {
		PartitionProbe probe = new PartitionProbe(this.fixture, "fence-gone-others");
		this.fixture.scheduler.enqueue("fence-gone-others", new Job("x"));
		ClaimedTask task = this.fixture.store.claim("fence-gone-others", 1, "w1").tasks().get(0);
		this.fixture.store.ack("fence-gone-others", List.of(task.lease()));
		Map<String, String> before = probe.snapshot();
		assertThat(this.fixture.store.fail("fence-gone-others", task.lease(), FAILURE).kind())
			.isEqualTo(FailOutcome.Kind.GONE);
		assertThat(this.fixture.store.extend("fence-gone-others", List.of(task.lease())))
			.containsExactly(ExtendOutcome.LOST);
		assertThat(this.fixture.store.release("fence-gone-others", List.of(task.lease())))
			.containsExactly(ReleaseOutcome.GONE);
		assertThat(probe.snapshot()).isEqualTo(before);
		assertThat(probe.allKeys()).as("no zombie task hash").doesNotContain(probe.keys.task(task.id().value()));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void replayedFailWhoseFirstCallWasAppliedIsGoneNotStale() {
		List<TaskFailure> failures = List.of(FAILURE,
				new TaskFailure(Duration.ofMinutes(1), FailureReason.NON_RETRYABLE, "java.lang.IllegalStateException",
						"later"),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, "java.lang.IllegalStateException", "fatal"));
		for (int i = 0; i < failures.size(); i++) {
			String queue = "fence-fail-replay-" + i;
			PartitionProbe probe = new PartitionProbe(this.fixture, queue);
			this.fixture.scheduler.enqueue(queue, new Job("x"));
			ClaimedTask task = this.fixture.store.claim(queue, 1, "w1").tasks().get(0);
			FailOutcome first = this.fixture.store.fail(queue, task.lease(), failures.get(i));
			assertThat(first.kind()).isIn(FailOutcome.Kind.RETRY_READY, FailOutcome.Kind.RETRY_SCHEDULED,
					FailOutcome.Kind.DEAD);
			Map<String, String> before = probe.snapshot();
			assertThat(this.fixture.store.fail(queue, task.lease(), failures.get(i)).kind())
				.as("replay of %s", first.kind())
				.isEqualTo(FailOutcome.Kind.GONE);
			assertThat(probe.snapshot()).isEqualTo(before);
			assertThat(probe.stat("stale")).isZero();
			assertThat(probe.violations()).isEmpty();
		}
	}

	@Test
	void lateFailAfterTheNextOwnerRecordedItsFailureIsStale() {
		Takeover takeover = takeover("fence-fail-after-next");
		PartitionProbe probe = takeover.probe();
		assertThat(this.fixture.store
			.fail("fence-fail-after-next", takeover.current().lease(),
					new TaskFailure(Duration.ofMinutes(1), FailureReason.NON_RETRYABLE,
							"java.lang.IllegalStateException", "later"))
			.kind()).isEqualTo(FailOutcome.Kind.RETRY_SCHEDULED);
		Map<String, String> before = probe.snapshot("stale");
		assertThat(this.fixture.store.fail("fence-fail-after-next", takeover.old().lease(), FAILURE).kind())
			.as("the task ran twice: the old lease's run and the next owner's")
			.isEqualTo(FailOutcome.Kind.STALE);
		assertThat(probe.snapshot("stale")).isEqualTo(before);
		assertThat(probe.stat("stale")).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void ackOfTaskThatNeverExistedIsGone() {
		PartitionProbe probe = new PartitionProbe(this.fixture, "fence-never");
		Lease lease = new Lease(TaskId.of("never-existed"), "w1:1", null);
		assertThat(this.fixture.store.ack("fence-never", List.of(lease))).containsExactly(AckOutcome.GONE);
		assertThat(probe.allKeys()).isEmpty();
	}

	/** Claim a task, let its lease expire and have another dispatcher claim it. */
	private Takeover takeover(String queue) {
		PartitionProbe probe = new PartitionProbe(this.fixture, queue);
		TaskId id = this.fixture.scheduler.enqueue(queue, new Job("contended"));
		ClaimBatch first = this.fixture.store.claim(queue, 1, "w1");
		probe.awaitAfter(first.now() + LEASE.toMillis() + GRACE.toMillis());
		ClaimBatch second = this.fixture.store.claim(queue, 1, "w2");
		assertThat(second.tasks()).extracting(ClaimedTask::id).containsExactly(id);
		ClaimedTask old = first.tasks().get(0);
		ClaimedTask current = second.tasks().get(0);
		assertThat(old.token()).isEqualTo("w1:1");
		assertThat(current.token()).isEqualTo("w2:2");
		assertThat(probe.stat("reaped")).isOne();
		return new Takeover(probe, old, current);
	}

	record Takeover(PartitionProbe probe, ClaimedTask old, ClaimedTask current) {
	}

	record Job(String name) {
	}

}

package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo.TaskError;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
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
import static org.assertj.core.api.Assertions.entry;

/**
 * One test per row of the task state table (redis-algorithms §6.3, as v1 has it): each
 * drives one transition through the public scheduler, the worker-facing store or the dead
 * letters, and checks the partition's keys, the counters, the return values and the
 * invariants afterwards.
 */
@WithRedis
class StateTransitionsIntegrationTests {

	private static final String BOOM = "java.lang.IllegalStateException";

	/**
	 * Short, so that tests that wait for a lease to expire are quick; tests that check
	 * that something does not happen before a deadline use {@link StoreFixture#LEASE}.
	 */
	private static final Duration SHORT_LEASE = Duration.ofMillis(300);

	/**
	 * A due time far enough ahead that the calls before it, on a loaded machine, still
	 * run before it.
	 */
	private static final Duration SOON = Duration.ofSeconds(2);

	private static final Duration SHORT_GRACE = Duration.ofMillis(100);

	private TestRedis testRedis;

	private StoreFixture fixture;

	private StoreFixture shortLeaseFixture;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.testRedis = redis;
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
		if (this.shortLeaseFixture != null) {
			this.shortLeaseFixture.close();
		}
	}

	// (new) -> S / R

	@Test
	void enqueueWithDelayCreatesScheduledTaskInSched() {
		PartitionProbe probe = probe("st-new-delayed");
		long before = probe.now();
		ScheduleResult result = this.fixture.scheduler
			.submit(TaskRequest.of("st-new-delayed", new Greeting("later")).delay(Duration.ofHours(1)));
		long after = probe.now();
		String id = result.id().value();
		long due = result.dueAt().toEpochMilli();
		assertThat(result.outcome()).isEqualTo(ScheduleResult.Outcome.CREATED);
		assertThat(id).hasSize(14);
		assertThat(due).isBetween(before + 3_600_000, after + 3_600_000);
		assertThat(probe.sched()).containsExactly(entry(id, due));
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.dead()).isEmpty();
		Map<String, String> task = probe.task(id);
		assertThat(task).containsOnlyKeys("s", "a", "v", "m", "f", "d", "c")
			.containsEntry("s", "S")
			.containsEntry("a", "0")
			.containsEntry("v", "0")
			.containsEntry("m", "4")
			.containsEntry("f", "0")
			.containsEntry("d", Long.toString(due));
		assertThat(Long.parseLong(task.get("c"))).isBetween(before, after);
		assertThat(probe.payload(id)).isEqualTo("{\"h\":{},\"b\":{\"text\":\"later\"}}");
		assertThat(probe.stat("enq")).isOne();
		assertThat(probe.tickTokens()).as("a new earliest due time ticks the timer").isOne();
		assertThat(probe.wakeTokens()).isZero();
		assertThat(this.fixture.redis.opsForHash().get(probe.keys.meta(), "v")).isEqualTo(LayoutVersion.CURRENT);
		assertThat(this.fixture.queues.queues()).contains("st-new-delayed");
		assertThat(this.fixture.scheduler.find("st-new-delayed", result.id())).hasValueSatisfying((info) -> {
			assertThat(info.state()).isEqualTo(TaskState.SCHEDULED);
			assertThat(info.dueAt()).isEqualTo(result.dueAt());
			assertThat(info.failures()).isZero();
			assertThat(info.deliveries()).isZero();
			assertThat(info.maxAttempts()).isEqualTo(4);
			assertThat(info.cancelRequested()).isFalse();
			assertThat(info.lastError()).isNull();
		});
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void enqueueWithoutDelayCreatesReadyTaskInReady() {
		PartitionProbe probe = probe("st-new-ready");
		long before = probe.now();
		TaskId id = this.fixture.scheduler.enqueue("st-new-ready", new Greeting("now"));
		long after = probe.now();
		assertThat(probe.ready()).containsExactly(id.value());
		assertThat(probe.sched()).isEmpty();
		Map<String, String> task = probe.task(id.value());
		assertThat(task).containsEntry("s", "R").containsEntry("a", "0").containsEntry("v", "0");
		assertThat(Long.parseLong(task.get("d"))).isBetween(before, after).isEqualTo(Long.parseLong(task.get("c")));
		assertThat(probe.wakeTokens()).as("a ready task wakes a dispatcher").isOne();
		assertThat(probe.tickTokens()).isZero();
		assertThat(probe.stat("enq")).isOne();
		assertThat(this.fixture.scheduler.find("st-new-ready", id))
			.hasValueSatisfying((info) -> assertThat(info.state()).isEqualTo(TaskState.READY));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void scheduleAtPastInstantCreatesReadyTaskDueAtThatInstant() {
		PartitionProbe probe = probe("st-new-past");
		Instant past = Instant.now().minus(Duration.ofMinutes(5));
		ScheduleResult result = this.fixture.scheduler
			.submit(TaskRequest.of("st-new-past", new Greeting("overdue")).at(past));
		String id = result.id().value();
		assertThat(result.dueAt()).isEqualTo(past.truncatedTo(ChronoUnit.MILLIS));
		assertThat(probe.ready()).containsExactly(id);
		assertThat(probe.task(id)).containsEntry("s", "R").containsEntry("d", Long.toString(past.toEpochMilli()));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void scheduleAtFutureInstantCreatesScheduledTaskDueAtThatInstant() {
		PartitionProbe probe = probe("st-new-instant");
		Instant at = Instant.parse("2099-01-01T09:00:00Z");
		TaskId id = this.fixture.scheduler.schedule("st-new-instant", new Greeting("new century"), at);
		assertThat(probe.sched()).containsExactly(entry(id.value(), at.toEpochMilli()));
		assertThat(probe.task(id.value())).containsEntry("s", "S");
		assertThat(probe.violations()).isEmpty();
	}

	// S -> R (promotion)

	@Test
	void claimPromotesDueScheduledTaskToReady() {
		PartitionProbe probe = probe("st-promote-claim");
		ScheduleResult result = this.fixture.scheduler
			.submit(TaskRequest.of("st-promote-claim", new Greeting("soon")).delay(SOON));
		String id = result.id().value();
		ClaimBatch early = this.fixture.store.claim("st-promote-claim", 0, "n1");
		assertThat(early.now()).isLessThan(result.dueAt().toEpochMilli());
		assertThat(probe.sched()).containsOnlyKeys(id);
		probe.awaitNow(result.dueAt().toEpochMilli());
		probe.clearSignals();
		ClaimBatch batch = this.fixture.store.claim("st-promote-claim", 0, "n1");
		assertThat(batch.tasks()).isEmpty();
		assertThat(batch.nextDueMs()).isEqualTo(-1);
		assertThat(batch.more()).isFalse();
		assertThat(probe.sched()).isEmpty();
		assertThat(probe.ready()).containsExactly(id);
		assertThat(probe.task(id)).containsEntry("s", "R")
			.containsEntry("d", Long.toString(result.dueAt().toEpochMilli()));
		assertThat(probe.stat("promoted")).isOne();
		assertThat(probe.wakeTokens()).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void claimPromotesAndLeasesDueScheduledTaskInOneCall() {
		PartitionProbe probe = probe("st-promote-claim-lease");
		ScheduleResult result = this.fixture.scheduler
			.submit(TaskRequest.of("st-promote-claim-lease", new Greeting("soon")).delay(Duration.ofMillis(50)));
		probe.awaitNow(result.dueAt().toEpochMilli());
		ClaimBatch batch = this.fixture.store.claim("st-promote-claim-lease", 4, "n1");
		assertThat(batch.tasks()).singleElement().satisfies((task) -> {
			assertThat(task.id()).isEqualTo(result.id());
			assertThat(task.dueMs()).isEqualTo(result.dueAt().toEpochMilli());
			assertThat(batch.now() - task.dueMs()).as("lateness").isNotNegative();
		});
		assertThat(probe.stat("promoted")).isOne();
		assertThat(probe.stat("claimed")).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void promoteMovesDueScheduledTaskToReadyAndTakesTheTimer() {
		PartitionProbe probe = probe("st-promote-timer");
		ScheduleResult due = this.fixture.scheduler
			.submit(TaskRequest.of("st-promote-timer", new Greeting("soon")).delay(Duration.ofMillis(50)));
		ScheduleResult later = this.fixture.scheduler
			.submit(TaskRequest.of("st-promote-timer", new Greeting("later")).delay(Duration.ofHours(1)));
		probe.awaitNow(due.dueAt().toEpochMilli());
		probe.clearSignals();
		TimerTick tick = this.fixture.store.promote("st-promote-timer", "owner-1", Duration.ofSeconds(3));
		assertThat(tick.owner()).isTrue();
		assertThat(tick.ttlMs()).isEqualTo(3000);
		assertThat(tick.nextDueMs()).isEqualTo(later.dueAt().toEpochMilli());
		assertThat(tick.earliestLeaseMs()).isEqualTo(-1);
		assertThat(tick.more()).isFalse();
		assertThat(probe.ready()).containsExactly(due.id().value());
		assertThat(probe.sched()).containsOnlyKeys(later.id().value());
		assertThat(probe.task(due.id().value())).containsEntry("s", "R");
		assertThat(probe.task(later.id().value())).containsEntry("s", "S");
		assertThat(this.fixture.redis.opsForValue().get(probe.keys.timer())).isEqualTo("owner-1");
		assertThat(probe.pttl(probe.keys.timer())).isBetween(1L, 3000L);
		assertThat(probe.stat("promoted")).isOne();
		assertThat(probe.wakeTokens()).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void promoteByAnotherInstanceDoesNothingWhileTheTimerIsOwned() {
		PartitionProbe probe = probe("st-promote-not-owner");
		ScheduleResult due = this.fixture.scheduler
			.submit(TaskRequest.of("st-promote-not-owner", new Greeting("soon")).delay(SOON));
		assertThat(this.fixture.store.promote("st-promote-not-owner", "owner-1", Duration.ofSeconds(30)).owner())
			.isTrue();
		assertThat(probe.sched()).as("not yet due when owner-1 took the timer").containsOnlyKeys(due.id().value());
		probe.awaitNow(due.dueAt().toEpochMilli());
		TimerTick tick = this.fixture.store.promote("st-promote-not-owner", "owner-2", Duration.ofSeconds(30));
		assertThat(tick.owner()).isFalse();
		assertThat(tick.ttlMs()).isBetween(1L, 30_000L);
		assertThat(probe.sched()).containsOnlyKeys(due.id().value());
		assertThat(this.fixture.redis.opsForValue().get(probe.keys.timer())).isEqualTo("owner-1");
		this.fixture.store.resignTimer("st-promote-not-owner", "owner-1");
		assertThat(probe.exists(probe.keys.timer())).isFalse();
		assertThat(this.fixture.store.promote("st-promote-not-owner", "owner-2", Duration.ofSeconds(30)).owner())
			.isTrue();
		assertThat(probe.ready()).containsExactly(due.id().value());
		assertThat(probe.violations()).isEmpty();
	}

	// R -> A (claim)

	@Test
	void claimLeasesReadyTaskWithTokenAndLeaseDeadline() {
		PartitionProbe probe = probe("st-claim");
		ScheduleResult result = this.fixture.scheduler.submit(TaskRequest.of("st-claim", new Greeting("hi")));
		String id = result.id().value();
		Map<String, String> created = probe.task(id);
		probe.clearSignals();
		ClaimBatch batch = this.fixture.store.claim("st-claim", 4, "nonce7");
		assertThat(batch.paused()).isFalse();
		assertThat(batch.more()).isFalse();
		assertThat(batch.nextDueMs()).isEqualTo(-1);
		assertThat(batch.earliestLeaseMs()).isEqualTo(batch.now() + StoreFixture.LEASE.toMillis());
		assertThat(batch.tasks()).singleElement().satisfies((task) -> {
			assertThat(task.id()).isEqualTo(result.id());
			assertThat(task.token()).isEqualTo("nonce7:1");
			assertThat(task.envelope()).isEqualTo("{\"h\":{},\"b\":{\"text\":\"hi\"}}");
			assertThat(task.failures()).isZero();
			assertThat(task.deliveries()).isOne();
			assertThat(task.maxAttempts()).isEqualTo(4);
			assertThat(task.dueMs()).isEqualTo(result.dueAt().toEpochMilli());
			assertThat(task.createdMs()).isEqualTo(Long.parseLong(created.get("c")));
			assertThat(task.uniqueDigest()).isNull();
		});
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.lease()).containsExactly(entry(id, batch.now() + StoreFixture.LEASE.toMillis()));
		assertThat(probe.task(id)).containsEntry("s", "A")
			.containsEntry("k", "nonce7:1")
			.containsEntry("f", "1")
			.containsEntry("v", "1")
			.containsEntry("a", "0");
		assertThat(probe.stat("claimed")).isOne();
		assertThat(probe.tickTokens())
			.as("a lease that ends after the timer owner's next promotion does not tick it (ClaimTickIntegrationTests)")
			.isZero();
		assertThat(this.fixture.scheduler.find("st-claim", result.id()))
			.hasValueSatisfying((info) -> assertThat(info.state()).isEqualTo(TaskState.ACTIVE));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void claimTakesReadyTasksInOrderAndAtMostMax() {
		PartitionProbe probe = probe("st-claim-order");
		List<TaskId> ids = List.of(this.fixture.scheduler.enqueue("st-claim-order", new Greeting("1")),
				this.fixture.scheduler.enqueue("st-claim-order", new Greeting("2")),
				this.fixture.scheduler.enqueue("st-claim-order", new Greeting("3")));
		ClaimBatch batch = this.fixture.store.claim("st-claim-order", 2, "n1");
		assertThat(batch.tasks()).extracting(ClaimedTask::id).containsExactly(ids.get(0), ids.get(1));
		assertThat(batch.tasks())
			.allSatisfy((task) -> assertThat(task.token()).isEqualTo("n1:" + probe.task(task.id().value()).get("f")));
		assertThat(batch.tasks()).extracting(ClaimedTask::token).doesNotHaveDuplicates();
		assertThat(batch.more()).isTrue();
		assertThat(probe.ready()).containsExactly(ids.get(2).value());
		assertThat(probe.violations()).isEmpty();
	}

	// A -> A (extend)

	@Test
	void extendPushesLeaseDeadlineLater() {
		PartitionProbe probe = probe("st-extend");
		this.fixture.scheduler.enqueue("st-extend", new Greeting("long job"));
		ClaimBatch batch = this.fixture.store.claim("st-extend", 1, "n1");
		ClaimedTask task = batch.tasks().get(0);
		long firstDeadline = probe.lease().get(task.id().value());
		probe.awaitNow(batch.now() + 20);
		long before = probe.now();
		List<ExtendOutcome> outcomes = this.fixture.store.extend("st-extend", List.of(task.lease()));
		long after = probe.now();
		assertThat(outcomes).containsExactly(ExtendOutcome.EXTENDED);
		long deadline = probe.lease().get(task.id().value());
		assertThat(deadline).isGreaterThan(firstDeadline)
			.isBetween(before + StoreFixture.LEASE.toMillis(), after + StoreFixture.LEASE.toMillis());
		assertThat(probe.task(task.id().value())).containsEntry("s", "A").containsEntry("k", task.token());
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void extendNeverShortensALeaseAlreadyPushedFurther() {
		PartitionProbe probe = probe("st-extend-gt");
		this.fixture.scheduler.enqueue("st-extend-gt", new Greeting("long job"));
		ClaimedTask task = this.fixture.store.claim("st-extend-gt", 1, "n1").tasks().get(0);
		StoreSettings longLease = StoreFixture.settings(this.testRedis.keyPrefix(), Duration.ofMinutes(10),
				StoreFixture.GRACE);
		new RedisTaskStore(this.fixture.scripts, longLease).extend("st-extend-gt", List.of(task.lease()));
		long pushed = probe.lease().get(task.id().value());
		assertThat(this.fixture.store.extend("st-extend-gt", List.of(task.lease())))
			.containsExactly(ExtendOutcome.EXTENDED);
		assertThat(probe.lease()).containsExactly(entry(task.id().value(), pushed));
		assertThat(probe.violations()).isEmpty();
	}

	// A -> deleted (ack)

	@Test
	void ackDeletesTaskAndFreesItsUniqueSlot() {
		PartitionProbe probe = probe("st-ack");
		ScheduleResult result = this.fixture.scheduler.submit(
				TaskRequest.of("st-ack", new Greeting("once")).uniqueKey("welcome-7").uniqueFor(Duration.ofHours(1)));
		String id = result.id().value();
		ClaimedTask task = this.fixture.store.claim("st-ack", 1, "n1").tasks().get(0);
		assertThat(task.uniqueDigest()).isNotNull();
		String uniqueKey = probe.keys.unique(task.uniqueDigest());
		assertThat(this.fixture.redis.opsForValue().get(uniqueKey)).isEqualTo(id);
		assertThat(this.fixture.store.ack("st-ack", List.of(task.lease()))).containsExactly(AckOutcome.DONE);
		assertThat(probe.taskKeys(id)).isEmpty();
		assertThat(probe.exists(uniqueKey)).isFalse();
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.stat("done")).isOne();
		assertThat(probe.stat("stale")).isZero();
		assertThat(this.fixture.scheduler.find("st-ack", result.id())).isEmpty();
		assertThat(probe.violations()).isEmpty();
		ScheduleResult again = this.fixture.scheduler.submit(
				TaskRequest.of("st-ack", new Greeting("once")).uniqueKey("welcome-7").uniqueFor(Duration.ofHours(1)));
		assertThat(again.outcome()).isEqualTo(ScheduleResult.Outcome.CREATED);
		assertThat(again.id()).isNotEqualTo(result.id());
	}

	@Test
	void ackCompletesBatchOfLeases() {
		PartitionProbe probe = probe("st-ack-batch");
		this.fixture.scheduler.enqueue("st-ack-batch", new Greeting("1"));
		this.fixture.scheduler.enqueue("st-ack-batch", new Greeting("2"));
		List<ClaimedTask> tasks = this.fixture.store.claim("st-ack-batch", 2, "n1").tasks();
		assertThat(this.fixture.store.ack("st-ack-batch", tasks.stream().map(ClaimedTask::lease).toList()))
			.containsExactly(AckOutcome.DONE, AckOutcome.DONE);
		assertThat(probe.allKeys()).containsExactlyInAnyOrder(probe.keys.stats(), probe.keys.meta(), probe.keys.wake());
		assertThat(probe.stat("done")).isEqualTo(2);
		assertThat(probe.violations()).isEmpty();
	}

	// A -> S / R / D (fail)

	@Test
	void failWithBackOffSchedulesRetry() {
		PartitionProbe probe = probe("st-fail-backoff");
		TaskId id = this.fixture.scheduler.enqueue("st-fail-backoff", new Greeting("flaky"));
		ClaimedTask task = this.fixture.store.claim("st-fail-backoff", 1, "n1").tasks().get(0);
		probe.clearSignals();
		FailOutcome outcome = this.fixture.store.fail("st-fail-backoff", task.lease(),
				new TaskFailure(Duration.ofMinutes(1), FailureReason.NON_RETRYABLE, BOOM, "boom"));
		assertThat(outcome.kind()).isEqualTo(FailOutcome.Kind.RETRY_SCHEDULED);
		assertThat(outcome.dueMs()).isEqualTo(outcome.now() + 60_000);
		assertThat(probe.sched()).containsExactly(entry(id.value(), outcome.dueMs()));
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.task(id.value())).containsEntry("s", "S")
			.containsEntry("a", "1")
			.containsEntry("v", "1")
			.containsEntry("d", Long.toString(outcome.dueMs()))
			.doesNotContainKey("k");
		assertThat(probe.error(id.value())).isEqualTo("failed\n" + BOOM + "\nboom");
		assertThat(probe.stat("retry")).isOne();
		assertThat(probe.tickTokens()).as("the retry is the new earliest due time").isOne();
		assertThat(this.fixture.scheduler.find("st-fail-backoff", id)).hasValueSatisfying((info) -> {
			assertThat(info.state()).isEqualTo(TaskState.SCHEDULED);
			assertThat(info.failures()).isOne();
			assertThat(info.lastError()).isEqualTo(new TaskError("failed", BOOM, "boom"));
		});
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void failWithZeroBackOffMakesTaskReadyAgain() {
		PartitionProbe probe = probe("st-fail-now");
		TaskId id = this.fixture.scheduler.enqueue("st-fail-now", new Greeting("flaky"));
		ClaimedTask task = this.fixture.store.claim("st-fail-now", 1, "n1").tasks().get(0);
		probe.clearSignals();
		FailOutcome outcome = this.fixture.store.fail("st-fail-now", task.lease(),
				new TaskFailure(Duration.ZERO, FailureReason.NON_RETRYABLE, BOOM, "again"));
		assertThat(outcome.kind()).isEqualTo(FailOutcome.Kind.RETRY_READY);
		assertThat(outcome.dueMs()).isEqualTo(outcome.now());
		assertThat(probe.ready()).containsExactly(id.value());
		assertThat(probe.sched()).isEmpty();
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.task(id.value())).containsEntry("s", "R")
			.containsEntry("a", "1")
			.containsEntry("d", Long.toString(outcome.now()))
			.doesNotContainKey("k");
		assertThat(probe.error(id.value())).isEqualTo("failed\n" + BOOM + "\nagain");
		assertThat(probe.stat("retry")).isOne();
		assertThat(probe.wakeTokens()).isOne();
		assertThat(probe.violations()).isEmpty();
		ClaimedTask retry = this.fixture.store.claim("st-fail-now", 1, "n2").tasks().get(0);
		assertThat(retry.failures()).isOne();
		assertThat(retry.deliveries()).isEqualTo(2);
		assertThat(retry.token()).isEqualTo("n2:2");
	}

	@Test
	void failWithAttemptsExhaustedDeadLettersTask() {
		PartitionProbe probe = probe("st-fail-exhausted");
		TaskId id = this.fixture.scheduler
			.schedule(TaskRequest.of("st-fail-exhausted", new Greeting("doomed")).maxAttempts(2));
		ClaimedTask first = this.fixture.store.claim("st-fail-exhausted", 1, "n1").tasks().get(0);
		assertThat(this.fixture.store
			.fail("st-fail-exhausted", first.lease(),
					new TaskFailure(Duration.ZERO, FailureReason.NON_RETRYABLE, BOOM, "one"))
			.kind()).isEqualTo(FailOutcome.Kind.RETRY_READY);
		ClaimedTask second = this.fixture.store.claim("st-fail-exhausted", 1, "n1").tasks().get(0);
		FailOutcome outcome = this.fixture.store.fail("st-fail-exhausted", second.lease(),
				new TaskFailure(Duration.ZERO, FailureReason.NON_RETRYABLE, BOOM, "two"));
		assertThat(outcome.kind()).isEqualTo(FailOutcome.Kind.DEAD);
		assertThat(outcome.dueMs()).isEqualTo(-1);
		assertThat(probe.dead()).containsExactly(entry(id.value(), outcome.now()));
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.sched()).isEmpty();
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.task(id.value())).containsEntry("s", "D").containsEntry("a", "2").doesNotContainKey("k");
		assertThat(probe.payload(id.value())).isNotNull();
		assertThat(probe.error(id.value())).isEqualTo("retries-exhausted\n" + BOOM + "\ntwo");
		assertThat(probe.stat("dead")).isOne();
		assertThat(probe.stat("retry")).isOne();
		assertThat(this.fixture.deadLetters.list("st-fail-exhausted", 10)).containsExactly(new DeadLetter(id,
				"st-fail-exhausted", "retries-exhausted", BOOM, "two", 2, Instant.ofEpochMilli(outcome.now())));
		assertThat(this.fixture.scheduler.find("st-fail-exhausted", id))
			.hasValueSatisfying((info) -> assertThat(info.state()).isEqualTo(TaskState.DEAD));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void failWithoutRetryDeadLettersTaskWithTheGivenReason() {
		PartitionProbe probe = probe("st-fail-fatal");
		TaskId id = this.fixture.scheduler.enqueue("st-fail-fatal", new Greeting("bad input"));
		ClaimedTask task = this.fixture.store.claim("st-fail-fatal", 1, "n1").tasks().get(0);
		FailOutcome outcome = this.fixture.store.fail("st-fail-fatal", task.lease(),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, "com.example.BadInputException", "no such user"));
		assertThat(outcome.kind()).isEqualTo(FailOutcome.Kind.DEAD);
		assertThat(probe.dead()).containsExactly(entry(id.value(), outcome.now()));
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.task(id.value())).containsEntry("s", "D")
			.containsEntry("a", "1")
			.containsEntry("m", "4")
			.doesNotContainKey("k");
		assertThat(probe.error(id.value())).isEqualTo("non-retryable\ncom.example.BadInputException\nno such user");
		assertThat(probe.stat("dead")).isOne();
		assertThat(probe.stat("retry")).isZero();
		assertThat(probe.violations()).isEmpty();
	}

	// A -> R / D (reap)

	@Test
	void reapAfterLeaseAndGraceMakesTaskReadyAndCountsTheDelivery() {
		// The 2 s lease: the claim that must not reap yet runs well inside it.
		StoreFixture fixture = this.fixture;
		PartitionProbe probe = new PartitionProbe(fixture, "st-reap");
		TaskId id = fixture.scheduler.enqueue("st-reap", new Greeting("crashy"));
		ClaimBatch claimed = fixture.store.claim("st-reap", 1, "n1");
		long deadline = claimed.now() + StoreFixture.LEASE.toMillis();
		ClaimBatch early = fixture.store.claim("st-reap", 0, "n2");
		assertThat(early.now()).as("Redis time of the early claim").isLessThan(deadline);
		assertThat(probe.lease()).as("not reaped before lease + grace").containsOnlyKeys(id.value());
		probe.awaitAfter(deadline + StoreFixture.GRACE.toMillis());
		ClaimBatch reaping = fixture.store.claim("st-reap", 0, "n2");
		assertThat(reaping.tasks()).isEmpty();
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.ready()).containsExactly(id.value());
		assertThat(probe.task(id.value())).containsEntry("s", "R").containsEntry("v", "1").doesNotContainKey("k");
		assertThat(probe.stat("reaped")).isOne();
		assertThat(probe.violations()).isEmpty();
		ClaimedTask again = fixture.store.claim("st-reap", 1, "n2").tasks().get(0);
		assertThat(again.deliveries()).isEqualTo(2);
		assertThat(again.failures()).isZero();
		assertThat(again.token()).isEqualTo("n2:2");
	}

	@Test
	void promoteReapsExpiredLeaseToo() {
		StoreFixture fixture = shortLeaseFixture(10);
		PartitionProbe probe = new PartitionProbe(fixture, "st-reap-promote");
		TaskId id = fixture.scheduler.enqueue("st-reap-promote", new Greeting("crashy"));
		ClaimBatch claimed = fixture.store.claim("st-reap-promote", 1, "n1");
		probe.awaitAfter(claimed.now() + SHORT_LEASE.toMillis() + SHORT_GRACE.toMillis());
		TimerTick tick = fixture.store.promote("st-reap-promote", "owner-1", Duration.ofSeconds(3));
		assertThat(tick.earliestLeaseMs()).isEqualTo(-1);
		assertThat(probe.ready()).containsExactly(id.value());
		assertThat(probe.task(id.value())).containsEntry("s", "R");
		assertThat(probe.stat("reaped")).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void reapAfterMaxDeliveriesDeadLettersTask() {
		StoreFixture fixture = shortLeaseFixture(2);
		PartitionProbe probe = new PartitionProbe(fixture, "st-reap-dead");
		TaskId id = fixture.scheduler.enqueue("st-reap-dead", new Greeting("poison"));
		ClaimBatch first = fixture.store.claim("st-reap-dead", 1, "n1");
		assertThat(first.tasks().get(0).deliveries()).isOne();
		probe.awaitAfter(first.now() + SHORT_LEASE.toMillis() + SHORT_GRACE.toMillis());
		ClaimBatch second = fixture.store.claim("st-reap-dead", 1, "n2");
		assertThat(second.tasks()).singleElement().satisfies((task) -> {
			assertThat(task.id()).isEqualTo(id);
			assertThat(task.deliveries()).isEqualTo(2);
		});
		probe.awaitAfter(second.now() + SHORT_LEASE.toMillis() + SHORT_GRACE.toMillis());
		ClaimBatch third = fixture.store.claim("st-reap-dead", 1, "n3");
		assertThat(third.tasks()).isEmpty();
		assertThat(probe.dead()).containsExactly(entry(id.value(), third.now()));
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.task(id.value())).containsEntry("s", "D").containsEntry("v", "2").doesNotContainKey("k");
		assertThat(probe.error(id.value())).isEqualTo("max-deliveries\n\nlease expired after 2 deliveries");
		assertThat(probe.stat("reaped")).isOne();
		assertThat(probe.stat("dead")).isOne();
		assertThat(fixture.deadLetters.list("st-reap-dead", 10)).singleElement().satisfies((letter) -> {
			assertThat(letter.reason()).isEqualTo("max-deliveries");
			assertThat(letter.exceptionType()).isEmpty();
		});
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void maxDeliveriesCountsExpiredLeasesNotOrdinaryFailures() {
		StoreFixture fixture = shortLeaseFixture(3);
		PartitionProbe probe = new PartitionProbe(fixture, "st-reap-count");
		TaskId id = fixture.scheduler.schedule(TaskRequest.of("st-reap-count", new Greeting("flaky")).maxAttempts(20));
		for (int i = 0; i < 3; i++) {
			ClaimedTask task = fixture.store.claim("st-reap-count", 1, "n" + i).tasks().get(0);
			assertThat(fixture.store
				.fail("st-reap-count", task.lease(),
						new TaskFailure(Duration.ZERO, FailureReason.NON_RETRYABLE, BOOM, "ordinary " + i))
				.kind()).isEqualTo(FailOutcome.Kind.RETRY_READY);
		}
		assertThat(probe.task(id.value())).as("no expired lease yet costs no field").doesNotContainKey("x");
		for (int expiry = 1; expiry <= 3; expiry++) {
			ClaimBatch claimed = fixture.store.claim("st-reap-count", 1, "c" + expiry);
			assertThat(claimed.tasks()).singleElement().satisfies((task) -> assertThat(task.id()).isEqualTo(id));
			probe.awaitAfter(claimed.now() + SHORT_LEASE.toMillis() + SHORT_GRACE.toMillis());
			assertThat(fixture.store.claim("st-reap-count", 0, "reaper").tasks()).isEmpty();
			if (expiry < 3) {
				assertThat(probe.ready()).as("reaped after expired lease %d", expiry).containsExactly(id.value());
				assertThat(probe.task(id.value())).containsEntry("s", "R")
					.containsEntry("v", Integer.toString(3 + expiry))
					.containsEntry("x", Integer.toString(expiry));
				assertThat(probe.dead()).isEmpty();
			}
		}
		assertThat(probe.dead()).containsOnlyKeys(id.value());
		assertThat(probe.task(id.value())).containsEntry("s", "D").containsEntry("v", "6").containsEntry("a", "3");
		assertThat(probe.error(id.value()))
			.isEqualTo("max-deliveries\n\nlease expired after 3 deliveries in a row (6 in all)");
		assertThat(probe.stat("reaped")).isEqualTo(2);
		assertThat(fixture.deadLetters.list("st-reap-count", 10)).singleElement()
			.satisfies((letter) -> assertThat(letter.reason()).isEqualTo("max-deliveries"));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void recordedFailureStartsTheCountOfExpiredLeasesAgain() {
		StoreFixture fixture = shortLeaseFixture(2);
		PartitionProbe probe = new PartitionProbe(fixture, "st-reap-reset");
		TaskId id = fixture.scheduler.enqueue("st-reap-reset", new Greeting("flaky"));
		ClaimBatch crashed = fixture.store.claim("st-reap-reset", 1, "n1");
		probe.awaitAfter(crashed.now() + SHORT_LEASE.toMillis() + SHORT_GRACE.toMillis());
		ClaimedTask retried = fixture.store.claim("st-reap-reset", 1, "n2").tasks().get(0);
		assertThat(probe.task(id.value())).containsEntry("x", "1");
		assertThat(fixture.store
			.fail("st-reap-reset", retried.lease(),
					new TaskFailure(Duration.ZERO, FailureReason.NON_RETRYABLE, BOOM, "ordinary"))
			.kind()).isEqualTo(FailOutcome.Kind.RETRY_READY);
		assertThat(probe.task(id.value())).doesNotContainKey("x");
		ClaimBatch again = fixture.store.claim("st-reap-reset", 1, "n3");
		probe.awaitAfter(again.now() + SHORT_LEASE.toMillis() + SHORT_GRACE.toMillis());
		assertThat(fixture.store.claim("st-reap-reset", 0, "reaper").tasks()).isEmpty();
		assertThat(probe.ready()).containsExactly(id.value());
		assertThat(probe.dead()).isEmpty();
		assertThat(probe.violations()).isEmpty();
	}

	// A -> R head (release)

	@Test
	void releaseReturnsTaskToHeadOfReadyWithoutCountingTheDelivery() {
		PartitionProbe probe = probe("st-release");
		TaskId first = this.fixture.scheduler.enqueue("st-release", new Greeting("first"));
		TaskId second = this.fixture.scheduler.enqueue("st-release", new Greeting("second"));
		ClaimedTask task = this.fixture.store.claim("st-release", 1, "n1").tasks().get(0);
		assertThat(task.id()).isEqualTo(first);
		probe.clearSignals();
		assertThat(this.fixture.store.release("st-release", List.of(task.lease())))
			.containsExactly(ReleaseOutcome.RELEASED);
		assertThat(probe.ready()).containsExactly(first.value(), second.value());
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.task(first.value())).containsEntry("s", "R")
			.containsEntry("v", "0")
			.containsEntry("a", "0")
			.doesNotContainKey("k");
		assertThat(probe.wakeTokens()).isOne();
		assertThat(probe.violations()).isEmpty();
		ClaimedTask again = this.fixture.store.claim("st-release", 1, "n2").tasks().get(0);
		assertThat(again.id()).isEqualTo(first);
		assertThat(again.deliveries()).isOne();
		assertThat(again.token()).as("the fence counter is never reset").isEqualTo("n2:2");
	}

	// cancel

	@Test
	void cancelScheduledTaskDeletesIt() {
		PartitionProbe probe = probe("st-cancel-s");
		TaskId id = this.fixture.scheduler.schedule("st-cancel-s", new Greeting("never"), Duration.ofHours(1));
		assertThat(this.fixture.scheduler.cancel("st-cancel-s", id)).isTrue();
		assertThat(probe.taskKeys(id.value())).isEmpty();
		assertThat(probe.sched()).isEmpty();
		assertThat(probe.stat("canceled")).isOne();
		assertThat(this.fixture.scheduler.find("st-cancel-s", id)).isEmpty();
		assertThat(this.fixture.scheduler.cancel("st-cancel-s", id)).as("a second cancel finds nothing").isFalse();
		assertThat(probe.stat("canceled")).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void cancelReadyTaskLeavesTombstoneWhoseHintTheNextClaimSkips() {
		PartitionProbe probe = probe("st-cancel-r");
		TaskId cancelled = this.fixture.scheduler.enqueue("st-cancel-r", new Greeting("never"));
		TaskId kept = this.fixture.scheduler.enqueue("st-cancel-r", new Greeting("kept"));
		assertThat(this.fixture.scheduler.cancel("st-cancel-r", cancelled)).isTrue();
		// gh: the hint it left behind, which a task created again with the id skips.
		assertThat(probe.task(cancelled.value())).containsOnly(entry("s", "X"), entry("gh", "1"));
		assertThat(probe.pttl(probe.keys.task(cancelled.value()))).isBetween(1L, Duration.ofDays(1).toMillis());
		assertThat(probe.exists(probe.keys.payload(cancelled.value()))).isFalse();
		assertThat(probe.ready()).containsExactly(cancelled.value(), kept.value());
		assertThat(probe.stat("ghost")).isOne();
		assertThat(probe.stat("canceled")).isOne();
		assertThat(this.fixture.scheduler.find("st-cancel-r", cancelled)).isEmpty();
		assertThat(probe.violations()).isEmpty();
		ClaimBatch batch = this.fixture.store.claim("st-cancel-r", 1, "n1");
		assertThat(batch.tasks()).extracting(ClaimedTask::id).containsExactly(kept);
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.stat("ghost")).isZero();
		assertThat(probe.task(cancelled.value())).containsExactly(entry("s", "X"));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void cancelOfCancelledReadyTaskReturnsFalse() {
		PartitionProbe probe = probe("st-cancel-x");
		TaskId id = this.fixture.scheduler.enqueue("st-cancel-x", new Greeting("never"));
		this.fixture.scheduler.cancel("st-cancel-x", id);
		Map<String, String> before = probe.snapshot();
		assertThat(this.fixture.scheduler.cancel("st-cancel-x", id)).isFalse();
		assertThat(this.fixture.scheduler.reschedule("st-cancel-x", id, Duration.ofHours(1))).isFalse();
		assertThat(probe.snapshot()).isEqualTo(before);
		assertThat(probe.stat("ghost")).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void cancelActiveTaskRequestsCancelWhichExtendReports() {
		PartitionProbe probe = probe("st-cancel-a");
		TaskId id = this.fixture.scheduler.enqueue("st-cancel-a", new Greeting("running"));
		ClaimedTask task = this.fixture.store.claim("st-cancel-a", 1, "n1").tasks().get(0);
		assertThat(this.fixture.scheduler.cancel("st-cancel-a", id)).as("not gone yet").isFalse();
		assertThat(probe.task(id.value())).containsEntry("cr", "1").containsEntry("s", "A");
		assertThat(probe.lease()).containsOnlyKeys(id.value());
		assertThat(this.fixture.scheduler.find("st-cancel-a", id)).hasValueSatisfying((info) -> {
			assertThat(info.state()).isEqualTo(TaskState.ACTIVE);
			assertThat(info.cancelRequested()).isTrue();
		});
		assertThat(this.fixture.store.extend("st-cancel-a", List.of(task.lease())))
			.containsExactly(ExtendOutcome.CANCEL_REQUESTED);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void failOfCancelRequestedTaskDeletesItInsteadOfRetrying() {
		PartitionProbe probe = probe("st-cancel-a-fail");
		TaskId id = this.fixture.scheduler.enqueue("st-cancel-a-fail", new Greeting("running"));
		ClaimedTask task = this.fixture.store.claim("st-cancel-a-fail", 1, "n1").tasks().get(0);
		this.fixture.scheduler.cancel("st-cancel-a-fail", id);
		FailOutcome outcome = this.fixture.store.fail("st-cancel-a-fail", task.lease(), new TaskFailure(Duration.ZERO,
				FailureReason.NON_RETRYABLE, "java.lang.InterruptedException", "stopped"));
		assertThat(outcome.kind()).isEqualTo(FailOutcome.Kind.CANCELLED);
		assertThat(probe.taskKeys(id.value())).isEmpty();
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.sched()).isEmpty();
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.dead()).isEmpty();
		assertThat(probe.stat("canceled")).isOne();
		assertThat(probe.stat("retry")).isZero();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void releaseOfCancelRequestedTaskDeletesItInsteadOfRequeueing() {
		PartitionProbe probe = probe("st-cancel-a-release");
		TaskId id = this.fixture.scheduler.enqueue("st-cancel-a-release", new Greeting("running"));
		ClaimedTask task = this.fixture.store.claim("st-cancel-a-release", 1, "n1").tasks().get(0);
		this.fixture.scheduler.cancel("st-cancel-a-release", id);
		assertThat(this.fixture.store.release("st-cancel-a-release", List.of(task.lease())))
			.containsExactly(ReleaseOutcome.CANCELLED);
		assertThat(probe.taskKeys(id.value())).isEmpty();
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.stat("canceled")).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void reapOfCancelRequestedTaskDeletesItInsteadOfRedelivering() {
		StoreFixture fixture = shortLeaseFixture(10);
		PartitionProbe probe = new PartitionProbe(fixture, "st-cancel-a-reap");
		TaskId id = fixture.scheduler.schedule(TaskRequest.of("st-cancel-a-reap", new Greeting("running"))
			.uniqueKey("only-one")
			.uniqueFor(Duration.ofHours(1)));
		ClaimBatch claimed = fixture.store.claim("st-cancel-a-reap", 1, "n1");
		String uniqueKey = probe.keys.unique(claimed.tasks().get(0).uniqueDigest());
		fixture.scheduler.cancel("st-cancel-a-reap", id);
		probe.awaitAfter(claimed.now() + SHORT_LEASE.toMillis() + SHORT_GRACE.toMillis());
		fixture.store.claim("st-cancel-a-reap", 1, "n2");
		assertThat(probe.taskKeys(id.value())).isEmpty();
		assertThat(probe.exists(uniqueKey)).isFalse();
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.stat("canceled")).isOne();
		assertThat(probe.stat("reaped")).isZero();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void ackOfCancelRequestedTaskCompletesIt() {
		PartitionProbe probe = probe("st-cancel-a-ack");
		TaskId id = this.fixture.scheduler.enqueue("st-cancel-a-ack", new Greeting("running"));
		ClaimedTask task = this.fixture.store.claim("st-cancel-a-ack", 1, "n1").tasks().get(0);
		this.fixture.scheduler.cancel("st-cancel-a-ack", id);
		assertThat(this.fixture.store.ack("st-cancel-a-ack", List.of(task.lease()))).containsExactly(AckOutcome.DONE);
		assertThat(probe.taskKeys(id.value())).isEmpty();
		assertThat(probe.stat("done")).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void cancelOfDeadTaskIsRefused() {
		PartitionProbe probe = probe("st-cancel-d");
		TaskId id = deadLetter("st-cancel-d");
		Map<String, String> before = probe.snapshot();
		assertThat(this.fixture.scheduler.cancel("st-cancel-d", id)).isFalse();
		assertThat(probe.snapshot()).isEqualTo(before);
		assertThat(probe.dead()).containsOnlyKeys(id.value());
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void cancelOfUnknownTaskReturnsFalse() {
		PartitionProbe probe = probe("st-cancel-none");
		assertThat(this.fixture.scheduler.cancel("st-cancel-none", TaskId.of("no-such-task"))).isFalse();
		assertThat(probe.allKeys()).isEmpty();
	}

	// reschedule

	@Test
	void rescheduleScheduledTaskMovesItsDueTime() {
		PartitionProbe probe = probe("st-resched-s");
		TaskId id = this.fixture.scheduler.schedule("st-resched-s", new Greeting("move me"), Duration.ofHours(1));
		long before = probe.now();
		assertThat(this.fixture.scheduler.reschedule("st-resched-s", id, Duration.ofHours(2))).isTrue();
		long after = probe.now();
		long due = probe.sched().get(id.value());
		assertThat(due).isBetween(before + 7_200_000, after + 7_200_000);
		assertThat(probe.task(id.value())).containsEntry("s", "S").containsEntry("d", Long.toString(due));
		Instant at = Instant.parse("2099-06-01T00:00:00Z");
		assertThat(this.fixture.scheduler.reschedule("st-resched-s", id, at)).isTrue();
		assertThat(probe.sched()).containsExactly(entry(id.value(), at.toEpochMilli()));
		assertThat(this.fixture.scheduler.find("st-resched-s", id))
			.hasValueSatisfying((info) -> assertThat(info.dueAt()).isEqualTo(at));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void rescheduleScheduledTaskEarlierTicksTheTimer() {
		PartitionProbe probe = probe("st-resched-tick");
		TaskId id = this.fixture.scheduler.schedule("st-resched-tick", new Greeting("sooner"), Duration.ofHours(2));
		this.fixture.scheduler.schedule("st-resched-tick", new Greeting("other"), Duration.ofHours(1));
		probe.clearSignals();
		this.fixture.scheduler.reschedule("st-resched-tick", id, Duration.ofHours(3));
		assertThat(probe.tickTokens()).as("not the earliest").isZero();
		this.fixture.scheduler.reschedule("st-resched-tick", id, Duration.ofMinutes(5));
		assertThat(probe.tickTokens()).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void rescheduleScheduledTaskToNowMakesItReady() {
		PartitionProbe probe = probe("st-resched-now");
		TaskId id = this.fixture.scheduler.schedule("st-resched-now", new Greeting("now"), Duration.ofHours(1));
		probe.clearSignals();
		assertThat(this.fixture.scheduler.reschedule("st-resched-now", id, Duration.ZERO)).isTrue();
		assertThat(probe.sched()).isEmpty();
		assertThat(probe.ready()).containsExactly(id.value());
		assertThat(probe.task(id.value())).containsEntry("s", "R");
		assertThat(probe.wakeTokens()).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void rescheduleReadyTaskMovesItBackToScheduled() {
		PartitionProbe probe = probe("st-resched-r");
		TaskId id = this.fixture.scheduler.enqueue("st-resched-r", new Greeting("not yet"));
		long before = probe.now();
		assertThat(this.fixture.scheduler.reschedule("st-resched-r", id, Duration.ofHours(1))).isTrue();
		long due = probe.sched().get(id.value());
		assertThat(due).isGreaterThanOrEqualTo(before + 3_600_000);
		assertThat(probe.task(id.value())).containsEntry("s", "S").containsEntry("d", Long.toString(due));
		assertThat(probe.ready()).as("the hint stays behind").containsExactly(id.value());
		assertThat(probe.stat("ghost")).isOne();
		assertThat(probe.violations()).isEmpty();
		assertThat(this.fixture.store.claim("st-resched-r", 1, "n1").tasks()).isEmpty();
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.stat("ghost")).isZero();
		assertThat(probe.task(id.value())).containsEntry("s", "S");
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void rescheduleReadyTaskToNowKeepsItsPlaceInReady() {
		PartitionProbe probe = probe("st-resched-r-now");
		TaskId first = this.fixture.scheduler.enqueue("st-resched-r-now", new Greeting("first"));
		TaskId second = this.fixture.scheduler.enqueue("st-resched-r-now", new Greeting("second"));
		Instant past = Instant.parse("2020-01-01T00:00:00Z");
		assertThat(this.fixture.scheduler.reschedule("st-resched-r-now", first, past)).isTrue();
		assertThat(probe.ready()).containsExactly(first.value(), second.value());
		assertThat(probe.sched()).isEmpty();
		assertThat(probe.task(first.value())).containsEntry("s", "R")
			.containsEntry("d", Long.toString(past.toEpochMilli()));
		assertThat(probe.stat("ghost")).isZero();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void rescheduleOfActiveTaskIsRefused() {
		PartitionProbe probe = probe("st-resched-a");
		TaskId id = this.fixture.scheduler.enqueue("st-resched-a", new Greeting("running"));
		this.fixture.store.claim("st-resched-a", 1, "n1");
		Map<String, String> before = probe.snapshot();
		assertThat(this.fixture.scheduler.reschedule("st-resched-a", id, Duration.ofHours(1))).isFalse();
		assertThat(this.fixture.scheduler.reschedule("st-resched-a", id, Instant.now())).isFalse();
		assertThat(probe.snapshot()).isEqualTo(before);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void rescheduleOfDeadTaskIsRefused() {
		PartitionProbe probe = probe("st-resched-d");
		TaskId id = deadLetter("st-resched-d");
		Map<String, String> before = probe.snapshot();
		assertThat(this.fixture.scheduler.reschedule("st-resched-d", id, Duration.ofHours(1))).isFalse();
		assertThat(probe.snapshot()).isEqualTo(before);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void rescheduleOfUnknownTaskReturnsFalse() {
		PartitionProbe probe = probe("st-resched-none");
		assertThat(this.fixture.scheduler.reschedule("st-resched-none", TaskId.of("nope"), Duration.ofHours(1)))
			.isFalse();
		assertThat(probe.allKeys()).isEmpty();
	}

	// D -> R (redrive), D -> deleted (purge)

	@Test
	void redriveMakesDeadTaskReadyWithCountsReset() {
		PartitionProbe probe = probe("st-redrive");
		TaskId id = deadLetter("st-redrive");
		assertThat(probe.task(id.value())).containsEntry("a", "1").containsEntry("v", "1");
		probe.clearSignals();
		long before = probe.now();
		assertThat(this.fixture.deadLetters.redrive("st-redrive", id)).isTrue();
		long after = probe.now();
		assertThat(probe.dead()).isEmpty();
		assertThat(probe.ready()).containsExactly(id.value());
		Map<String, String> task = probe.task(id.value());
		assertThat(task).containsEntry("s", "R")
			.containsEntry("a", "0")
			.containsEntry("v", "0")
			.doesNotContainKeys("k", "cr");
		assertThat(Long.parseLong(task.get("d"))).isBetween(before, after);
		assertThat(probe.error(id.value())).isNull();
		assertThat(probe.stat("redriven")).isOne();
		assertThat(probe.wakeTokens()).isOne();
		assertThat(probe.violations()).isEmpty();
		ClaimedTask again = this.fixture.store.claim("st-redrive", 1, "n2").tasks().get(0);
		assertThat(again.failures()).isZero();
		assertThat(again.deliveries()).isOne();
		assertThat(again.envelope()).isEqualTo("{\"h\":{},\"b\":{\"text\":\"dead\"}}");
	}

	@Test
	void purgeDeletesDeadTasks() {
		PartitionProbe probe = probe("st-purge");
		TaskId first = deadLetter("st-purge");
		TaskId second = deadLetter("st-purge");
		TaskId live = this.fixture.scheduler.schedule("st-purge", new Greeting("live"), Duration.ofHours(1));
		assertThat(this.fixture.deadLetters.purge("st-purge")).isEqualTo(2);
		assertThat(probe.dead()).isEmpty();
		assertThat(probe.taskKeys(first.value())).isEmpty();
		assertThat(probe.taskKeys(second.value())).isEmpty();
		assertThat(probe.task(live.value())).containsEntry("s", "S");
		assertThat(probe.stat("purged")).isEqualTo(2);
		assertThat(this.fixture.deadLetters.purge("st-purge")).isZero();
		assertThat(probe.violations()).isEmpty();
	}

	private StoreFixture shortLeaseFixture(int maxDeliveries) {
		this.shortLeaseFixture = new StoreFixture(this.testRedis,
				new StoreSettings(this.testRedis.keyPrefix(), SHORT_LEASE, SHORT_GRACE, maxDeliveries, 500, 100, 16,
						1024 * 1024, Duration.ofDays(14), 100_000, 100, Duration.ofDays(1)));
		return this.shortLeaseFixture;
	}

	private PartitionProbe probe(String queue) {
		return new PartitionProbe(this.fixture, queue);
	}

	/** A task that ran once and failed without retry. */
	private TaskId deadLetter(String queue) {
		TaskId id = this.fixture.scheduler.enqueue(queue, new Greeting("dead"));
		ClaimedTask task = this.fixture.store.claim(queue, 1, "n1").tasks().get(0);
		assertThat(task.id()).isEqualTo(id);
		assertThat(this.fixture.store
			.fail(queue, task.lease(), new TaskFailure(null, FailureReason.NON_RETRYABLE, BOOM, "fatal"))
			.kind()).isEqualTo(FailOutcome.Kind.DEAD);
		return id;
	}

	record Greeting(String text) {
	}

}

package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.Names;
import dev.delayedtasks.ScheduleResult;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Each script that reads task data meets a task whose data is broken, next to two healthy
 * tasks: its hash lost the state field {@code s}, its {@code t:} key is a string, its
 * payload is gone, or (for claim) its id breaks the id rule. The script must not fail;
 * the broken task ends in {@code dead} marked corrupt where the script's contract says so
 * (otherwise it is left for the script that does check, and the test follows it there);
 * the healthy tasks are unharmed and the invariants hold.
 */
@WithRedis
class BadDataIntegrationTests {

	private static final Duration LEASE = Duration.ofMillis(1000);

	private static final Duration GRACE = Duration.ofMillis(200);

	private static final String BAD = "bad";

	private static final List<String> HEALTHY = List.of("healthy-1", "healthy-2");

	private static final String NO_STATE = "task hash has no state";

	private static final String NOT_A_HASH = "task key is not a hash";

	private static final String NO_PAYLOAD = "payload is missing";

	private static final String BAD_ID = "task id is not 1-64 letters, digits, \".\", \"-\", \"_\", \":\"";

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

	// claim, promoting due tasks first

	@Test
	void claimViaPromoteDeadLettersDueTaskWithoutState() {
		claimViaPromote("bad-claim-promote-state", Damage.NO_STATE, NO_STATE);
	}

	@Test
	void claimViaPromoteDeadLettersDueTaskThatIsNotAHash() {
		claimViaPromote("bad-claim-promote-type", Damage.WRONG_TYPE, NOT_A_HASH);
	}

	@Test
	void claimViaPromoteDeadLettersDueTaskWithoutPayload() {
		claimViaPromote("bad-claim-promote-payload", Damage.NO_PAYLOAD, NO_PAYLOAD);
	}

	private void claimViaPromote(String queue, Damage damage, String detail) {
		PartitionProbe probe = probe(queue);
		seedScheduled(queue, Duration.ofMillis(50));
		damage(probe, damage);
		probe.awaitAfter(probe.sched().values().stream().mapToLong(Long::longValue).max().getAsLong());
		ClaimBatch batch = this.fixture.store.claim(queue, 10, "n1");
		assertClaimedHealthy(batch);
		assertCorrupt(probe, detail);
		assertThat(probe.sched()).isEmpty();
		assertThat(probe.violations()).isEmpty();
	}

	// claim from ready

	@Test
	void claimDeadLettersReadyTaskWithoutState() {
		claimViaReady("bad-claim-ready-state", Damage.NO_STATE, NO_STATE);
	}

	@Test
	void claimDeadLettersReadyTaskThatIsNotAHash() {
		claimViaReady("bad-claim-ready-type", Damage.WRONG_TYPE, NOT_A_HASH);
	}

	@Test
	void claimDeadLettersReadyTaskWithoutPayload() {
		claimViaReady("bad-claim-ready-payload", Damage.NO_PAYLOAD, NO_PAYLOAD);
	}

	private void claimViaReady(String queue, Damage damage, String detail) {
		PartitionProbe probe = probe(queue);
		seedReady(queue);
		damage(probe, damage);
		ClaimBatch batch = this.fixture.store.claim(queue, 10, "n1");
		assertClaimedHealthy(batch);
		assertCorrupt(probe, detail);
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.violations()).isEmpty();
	}

	@ParameterizedTest
	@MethodSource("malformedIds")
	void claimDeadLettersReadyTaskWhoseIdBreaksTheIdRuleAndLeasesTheOthers(String malformed) {
		String queue = "bad-claim-id-" + malformed.length();
		PartitionProbe probe = probe(queue);
		seedReady(queue);
		renameTask(probe, BAD, malformed);
		ClaimBatch batch = this.fixture.store.claim(queue, 10, "n1");
		assertClaimedHealthy(batch);
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.dead()).containsOnlyKeys(malformed);
		assertThat(probe.error(malformed)).isEqualTo("corrupt\n\n" + BAD_ID);
		assertThat(probe.task(malformed)).containsEntry("s", "D").doesNotContainKey("k");
		assertThat(probe.stat("corrupt")).isOne();
		assertThat(probe.violations()).isEmpty();
		assertThat(this.fixture.deadLetters.count(queue)).isOne();
		assertThat(this.fixture.deadLetters.list(queue, 10)).as("an id no TaskId can hold is left out, not fatal")
			.isEmpty();
		assertThat(this.fixture.deadLetters.purge(queue)).isOne();
		assertThat(probe.taskKeys(malformed)).isEmpty();
	}

	static List<String> malformedIds() {
		return List.of("x".repeat(300), "has space", "line\nbreak");
	}

	@Test
	void claimAndTaskIdAgreeOnWhichIdsAreValid() {
		String queue = "bad-claim-id-rule";
		PartitionProbe probe = probe(queue);
		List<String> examples = List.of("a", "Z", "0", ":", "-", "order-42-reminder", "A.b_c:d-e", "x".repeat(64),
				TaskId.generate().value(), "", "x".repeat(65), "has space", "line\nbreak", "tab\tx", "brace{x}",
				"slash/x", "percent%x", "star*", "bracket[x]", "caret^", "dollar$", "plus+", "at@", "caf\u00e9",
				"nul\u0000x", "\u00e9".repeat(32));
		Map<String, Boolean> javaAccepts = new LinkedHashMap<>();
		for (int i = 0; i < examples.size(); i++) {
			String template = "template-" + i;
			this.fixture.scheduler.schedule(TaskRequest.of(queue, new Job(template)).id(template));
			renameTask(probe, template, examples.get(i));
			javaAccepts.put(examples.get(i), accepts(examples.get(i)));
		}
		assertThat(javaAccepts).containsValues(true, false);
		ClaimBatch batch = this.fixture.store.claim(queue, examples.size(), "n1");
		Map<String, Boolean> claimAccepts = new LinkedHashMap<>();
		examples.forEach((id) -> claimAccepts.put(id, !probe.dead().containsKey(id)));
		assertThat(claimAccepts).isEqualTo(javaAccepts);
		assertThat(batch.tasks()).extracting((task) -> task.id().value())
			.containsExactlyElementsOf(examples.stream().filter(javaAccepts::get).toList());
		assertThat(probe.violations()).isEmpty();
	}

	private static boolean accepts(String id) {
		try {
			Names.checkTaskId(id);
			return true;
		}
		catch (InvalidTaskRequestException ex) {
			return false;
		}
	}

	/** Give a ready task another id: its hash, its payload and its hint in ready. */
	private void renameTask(PartitionProbe probe, String from, String to) {
		if (from.equals(to)) {
			return;
		}
		List<String> ready = probe.ready();
		this.fixture.redis.rename(probe.keys.task(from), probe.keys.task(to));
		this.fixture.redis.rename(probe.keys.payload(from), probe.keys.payload(to));
		this.fixture.redis.opsForList().set(probe.keys.ready(), ready.indexOf(from), to);
	}

	// promote (timer tick)

	@Test
	void promoteDeadLettersDueTaskWithoutState() {
		promote("bad-promote-state", Damage.NO_STATE, NO_STATE);
	}

	@Test
	void promoteDeadLettersDueTaskThatIsNotAHash() {
		promote("bad-promote-type", Damage.WRONG_TYPE, NOT_A_HASH);
	}

	private void promote(String queue, Damage damage, String detail) {
		PartitionProbe probe = probe(queue);
		seedScheduled(queue, Duration.ofMillis(50));
		damage(probe, damage);
		probe.awaitAfter(probe.sched().values().stream().mapToLong(Long::longValue).max().getAsLong());
		TimerTick tick = this.fixture.store.promote(queue, "owner-1", Duration.ofSeconds(3));
		assertThat(tick.owner()).isTrue();
		assertThat(probe.ready()).containsExactlyElementsOf(HEALTHY);
		HEALTHY.forEach((id) -> assertThat(probe.task(id)).containsEntry("s", "R"));
		assertCorrupt(probe, detail);
		assertThat(probe.sched()).isEmpty();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void promoteMovesDueTaskWithoutPayloadToReadyWhereClaimDeadLettersIt() {
		String queue = "bad-promote-payload";
		PartitionProbe probe = probe(queue);
		seedScheduled(queue, Duration.ofMillis(50));
		damage(probe, Damage.NO_PAYLOAD);
		probe.awaitAfter(probe.sched().values().stream().mapToLong(Long::longValue).max().getAsLong());
		this.fixture.store.promote(queue, "owner-1", Duration.ofSeconds(3));
		// promote does not read payloads (its contract): the task moves on like the
		// others
		assertThat(probe.ready()).containsExactlyInAnyOrder(BAD, HEALTHY.get(0), HEALTHY.get(1));
		assertThat(probe.violations()).singleElement()
			.asString()
			.startsWith(BAD + " (s=R")
			.endsWith("live task without payload");
		ClaimBatch batch = this.fixture.store.claim(queue, 10, "n1");
		assertClaimedHealthy(batch);
		assertCorrupt(probe, NO_PAYLOAD);
		assertThat(probe.violations()).isEmpty();
	}

	// ack

	@Test
	void ackCompletesActiveTaskWithoutStateThatStillHoldsItsToken() {
		String queue = "bad-ack-state";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.NO_STATE);
		assertThat(this.fixture.store.ack(queue, leases(tasks))).containsExactly(AckOutcome.DONE, AckOutcome.DONE,
				AckOutcome.DONE);
		assertAllTasksGone(probe);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void ackDeadLettersActiveTaskThatIsNotAHash() {
		String queue = "bad-ack-type";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.WRONG_TYPE);
		assertThat(this.fixture.store.ack(queue, leases(tasks))).containsExactly(AckOutcome.DONE, AckOutcome.CORRUPT,
				AckOutcome.DONE);
		HEALTHY.forEach((id) -> assertThat(probe.taskKeys(id)).isEmpty());
		assertCorrupt(probe, NOT_A_HASH);
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.stat("done")).isEqualTo(2);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void ackCompletesActiveTaskWithoutPayload() {
		String queue = "bad-ack-payload";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.NO_PAYLOAD);
		assertThat(this.fixture.store.ack(queue, leases(tasks))).containsExactly(AckOutcome.DONE, AckOutcome.DONE,
				AckOutcome.DONE);
		assertAllTasksGone(probe);
		assertThat(probe.violations()).isEmpty();
	}

	// fail

	@Test
	void failSchedulesRetryOfActiveTaskWithoutStateThatStillHoldsItsToken() {
		String queue = "bad-fail-state";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.NO_STATE);
		Map<String, String> healthy = healthySnapshot(probe);
		FailOutcome outcome = this.fixture.store.fail(queue, tasks.get(BAD).lease(), retryInOneMinute());
		assertThat(outcome.kind()).isEqualTo(FailOutcome.Kind.RETRY_SCHEDULED);
		assertThat(probe.task(BAD)).containsEntry("s", "S").doesNotContainKey("k");
		assertThat(probe.sched()).containsOnlyKeys(BAD);
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void failDeadLettersActiveTaskThatIsNotAHash() {
		String queue = "bad-fail-type";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.WRONG_TYPE);
		Map<String, String> healthy = healthySnapshot(probe);
		FailOutcome outcome = this.fixture.store.fail(queue, tasks.get(BAD).lease(), retryInOneMinute());
		assertThat(outcome.kind()).isEqualTo(FailOutcome.Kind.CORRUPT);
		assertCorrupt(probe, NOT_A_HASH);
		assertThat(probe.lease()).containsOnlyKeys(HEALTHY);
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void failRetriesActiveTaskWithoutPayloadAndTheNextClaimDeadLettersIt() {
		String queue = "bad-fail-payload";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.NO_PAYLOAD);
		Map<String, String> healthy = healthySnapshot(probe);
		FailOutcome outcome = this.fixture.store.fail(queue, tasks.get(BAD).lease(),
				new TaskFailure(Duration.ZERO, FailureReason.NON_RETRYABLE, "java.lang.RuntimeException", "retry now"));
		// fail does not read payloads (its contract): the retry is queued like any other
		assertThat(outcome.kind()).isEqualTo(FailOutcome.Kind.RETRY_READY);
		assertThat(probe.violations()).singleElement()
			.asString()
			.startsWith(BAD + " (s=R")
			.endsWith("live task without payload");
		assertThat(this.fixture.store.claim(queue, 10, "n2").tasks()).isEmpty();
		assertCorrupt(probe, NO_PAYLOAD);
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	// extend

	@Test
	void extendKeepsLeaseOfActiveTaskWithoutStateUntilReapDeadLettersIt() {
		String queue = "bad-extend-state";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.NO_STATE);
		List<String> before = probe.violations();
		assertThat(before).singleElement().asString().startsWith(BAD + " ").endsWith("is not dead-lettered");
		assertThat(this.fixture.store.extend(queue, leases(tasks))).containsExactly(ExtendOutcome.EXTENDED,
				ExtendOutcome.EXTENDED, ExtendOutcome.EXTENDED);
		assertThat(probe.violations()).isEqualTo(before);
		reapAll(probe);
		assertCorrupt(probe, NO_STATE);
		assertThat(probe.ready()).containsExactlyElementsOf(HEALTHY);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void extendReportsActiveTaskThatIsNotAHashLostUntilReapDeadLettersIt() {
		String queue = "bad-extend-type";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.WRONG_TYPE);
		List<String> before = probe.violations();
		Map<String, Long> leases = probe.lease();
		assertThat(this.fixture.store.extend(queue, leases(tasks))).containsExactly(ExtendOutcome.EXTENDED,
				ExtendOutcome.LOST, ExtendOutcome.EXTENDED);
		assertThat(probe.violations()).isEqualTo(before);
		assertThat(probe.lease()).containsEntry(BAD, leases.get(BAD));
		reapAll(probe);
		assertCorrupt(probe, NOT_A_HASH);
		assertThat(probe.ready()).containsExactlyElementsOf(HEALTHY);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void extendKeepsLeaseOfActiveTaskWithoutPayloadUntilReapAndClaimDeadLetterIt() {
		String queue = "bad-extend-payload";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.NO_PAYLOAD);
		List<String> before = probe.violations();
		assertThat(this.fixture.store.extend(queue, leases(tasks))).containsExactly(ExtendOutcome.EXTENDED,
				ExtendOutcome.EXTENDED, ExtendOutcome.EXTENDED);
		assertThat(probe.violations()).isEqualTo(before);
		probe.awaitAfter(
				probe.lease().values().stream().mapToLong(Long::longValue).max().getAsLong() + GRACE.toMillis());
		ClaimBatch batch = this.fixture.store.claim(queue, 10, "n2");
		assertClaimedHealthy(batch);
		assertCorrupt(probe, NO_PAYLOAD);
		assertThat(probe.violations()).isEmpty();
	}

	// release

	@Test
	void releaseRequeuesActiveTaskWithoutStateThatStillHoldsItsToken() {
		String queue = "bad-release-state";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.NO_STATE);
		assertThat(this.fixture.store.release(queue, leases(tasks))).containsExactly(ReleaseOutcome.RELEASED,
				ReleaseOutcome.RELEASED, ReleaseOutcome.RELEASED);
		assertThat(probe.task(BAD)).containsEntry("s", "R");
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void releaseReportsActiveTaskThatIsNotAHashLostUntilReapDeadLettersIt() {
		String queue = "bad-release-type";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.WRONG_TYPE);
		List<String> before = probe.violations();
		assertThat(this.fixture.store.release(queue, leases(tasks))).containsExactly(ReleaseOutcome.RELEASED,
				ReleaseOutcome.LOST, ReleaseOutcome.RELEASED);
		assertThat(probe.violations()).isEqualTo(before);
		assertThat(probe.lease()).containsOnlyKeys(BAD);
		assertThat(probe.ready()).containsExactlyInAnyOrderElementsOf(HEALTHY);
		reapAll(probe);
		assertCorrupt(probe, NOT_A_HASH);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void releaseRequeuesActiveTaskWithoutPayloadAndTheNextClaimDeadLettersIt() {
		String queue = "bad-release-payload";
		PartitionProbe probe = probe(queue);
		Map<String, ClaimedTask> tasks = seedActive(queue);
		damage(probe, Damage.NO_PAYLOAD);
		assertThat(this.fixture.store.release(queue, leases(tasks))).containsExactly(ReleaseOutcome.RELEASED,
				ReleaseOutcome.RELEASED, ReleaseOutcome.RELEASED);
		assertThat(probe.violations()).singleElement()
			.asString()
			.startsWith(BAD + " (s=R")
			.endsWith("live task without payload");
		ClaimBatch batch = this.fixture.store.claim(queue, 10, "n2");
		assertClaimedHealthy(batch);
		assertCorrupt(probe, NO_PAYLOAD);
		assertThat(probe.violations()).isEmpty();
	}

	// cancel

	@Test
	void cancelDeadLettersScheduledTaskWithoutState() {
		cancelCorrupt("bad-cancel-state", Damage.NO_STATE, NO_STATE);
	}

	@Test
	void cancelDeadLettersTaskThatIsNotAHash() {
		cancelCorrupt("bad-cancel-type", Damage.WRONG_TYPE, NOT_A_HASH);
	}

	private void cancelCorrupt(String queue, Damage damage, String detail) {
		PartitionProbe probe = probe(queue);
		seedScheduled(queue, Duration.ofHours(1));
		damage(probe, damage);
		Map<String, String> healthy = healthySnapshot(probe);
		assertThat(this.fixture.scheduler.cancel(queue, TaskId.of(BAD))).isFalse();
		assertCorrupt(probe, detail);
		assertThat(probe.sched()).containsOnlyKeys(HEALTHY);
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void cancelDeadLettersActiveTaskWithoutStateAndTakesItOutOfLease() {
		String queue = "bad-cancel-active-state";
		PartitionProbe probe = probe(queue);
		seedActive(queue);
		damage(probe, Damage.NO_STATE);
		Map<String, String> healthy = healthySnapshot(probe);
		assertThat(this.fixture.scheduler.cancel(queue, TaskId.of(BAD))).isFalse();
		assertCorrupt(probe, NO_STATE);
		assertThat(probe.lease()).containsOnlyKeys(HEALTHY);
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void cancelDeadLettersActiveTaskThatIsNotAHashAndTakesItOutOfLease() {
		String queue = "bad-cancel-active-type";
		PartitionProbe probe = probe(queue);
		seedActive(queue);
		damage(probe, Damage.WRONG_TYPE);
		Map<String, String> healthy = healthySnapshot(probe);
		assertThat(this.fixture.scheduler.cancel(queue, TaskId.of(BAD))).isFalse();
		assertCorrupt(probe, NOT_A_HASH);
		assertThat(probe.lease()).containsOnlyKeys(HEALTHY);
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void cancelDeletesScheduledTaskWithoutPayload() {
		String queue = "bad-cancel-payload";
		PartitionProbe probe = probe(queue);
		seedScheduled(queue, Duration.ofHours(1));
		damage(probe, Damage.NO_PAYLOAD);
		Map<String, String> healthy = healthySnapshot(probe);
		assertThat(this.fixture.scheduler.cancel(queue, TaskId.of(BAD))).isTrue();
		assertThat(probe.taskKeys(BAD)).isEmpty();
		assertThat(probe.sched()).containsOnlyKeys(HEALTHY);
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	// reschedule

	@Test
	void rescheduleDeadLettersScheduledTaskWithoutState() {
		rescheduleCorrupt("bad-resched-state", Damage.NO_STATE, NO_STATE);
	}

	@Test
	void rescheduleDeadLettersTaskThatIsNotAHash() {
		rescheduleCorrupt("bad-resched-type", Damage.WRONG_TYPE, NOT_A_HASH);
	}

	private void rescheduleCorrupt(String queue, Damage damage, String detail) {
		PartitionProbe probe = probe(queue);
		seedScheduled(queue, Duration.ofHours(1));
		damage(probe, damage);
		Map<String, String> healthy = healthySnapshot(probe);
		assertThat(this.fixture.scheduler.reschedule(queue, TaskId.of(BAD), Duration.ofHours(2))).isFalse();
		assertCorrupt(probe, detail);
		assertThat(probe.sched()).containsOnlyKeys(HEALTHY);
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void rescheduleDeadLettersActiveTaskWithoutStateAndTakesItOutOfLease() {
		String queue = "bad-resched-active-state";
		PartitionProbe probe = probe(queue);
		seedActive(queue);
		damage(probe, Damage.NO_STATE);
		Map<String, String> healthy = healthySnapshot(probe);
		assertThat(this.fixture.scheduler.reschedule(queue, TaskId.of(BAD), Duration.ofHours(2))).isFalse();
		assertCorrupt(probe, NO_STATE);
		assertThat(probe.lease()).containsOnlyKeys(HEALTHY);
		assertThat(probe.sched()).isEmpty();
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void rescheduleMovesScheduledTaskWithoutPayloadAndTheClaimAfterItDeadLettersIt() {
		String queue = "bad-resched-payload";
		PartitionProbe probe = probe(queue);
		seedScheduled(queue, Duration.ofHours(1));
		damage(probe, Damage.NO_PAYLOAD);
		Map<String, String> healthy = healthySnapshot(probe);
		List<String> before = probe.violations();
		assertThat(this.fixture.scheduler.reschedule(queue, TaskId.of(BAD), Duration.ofHours(2))).isTrue();
		assertThat(probe.violations()).isEqualTo(before);
		assertThat(this.fixture.scheduler.reschedule(queue, TaskId.of(BAD), Duration.ZERO)).isTrue();
		assertThat(this.fixture.store.claim(queue, 10, "n1").tasks()).isEmpty();
		assertCorrupt(probe, NO_PAYLOAD);
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	// redrive

	@Test
	void redriveLeavesDeadTaskWithoutStateInDead() {
		redriveSkips("bad-redrive-state", Damage.NO_STATE);
	}

	@Test
	void redriveLeavesDeadTaskThatIsNotAHashInDead() {
		redriveSkips("bad-redrive-type", Damage.WRONG_TYPE);
	}

	@Test
	void redriveLeavesDeadTaskWithoutPayloadInDead() {
		redriveSkips("bad-redrive-payload", Damage.NO_PAYLOAD);
	}

	private void redriveSkips(String queue, Damage damage) {
		PartitionProbe probe = probe(queue);
		seedDead(queue);
		damage(probe, damage);
		String error = probe.error(BAD);
		Map<String, String> healthy = healthySnapshot(probe);
		assertThat(this.fixture.deadLetters.redrive(queue, TaskId.of(BAD))).isFalse();
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(this.fixture.deadLetters.redriveAll(queue)).isEqualTo(2);
		assertThat(probe.dead()).containsOnlyKeys(BAD);
		assertThat(probe.error(BAD)).isEqualTo(error);
		assertThat(probe.ready()).containsExactlyElementsOf(HEALTHY);
		HEALTHY.forEach((id) -> assertThat(probe.task(id)).containsEntry("s", "R"));
		assertThat(probe.stat("redriven")).isEqualTo(2);
		assertThat(probe.violations()).isEmpty();
	}

	// enqueue with the broken task's id

	@Test
	void enqueueWithIdOfTaskWithoutStateDeadLettersItAndFails() {
		enqueueCorrupt("bad-enqueue-state", Damage.NO_STATE, NO_STATE);
	}

	@Test
	void enqueueWithIdOfTaskThatIsNotAHashDeadLettersItAndFails() {
		enqueueCorrupt("bad-enqueue-type", Damage.WRONG_TYPE, NOT_A_HASH);
	}

	private void enqueueCorrupt(String queue, Damage damage, String detail) {
		PartitionProbe probe = probe(queue);
		seedScheduled(queue, Duration.ofHours(1));
		damage(probe, damage);
		Map<String, String> healthy = healthySnapshot(probe);
		assertThatExceptionOfType(DelayedTaskException.class)
			.isThrownBy(() -> this.fixture.scheduler.submit(TaskRequest.of(queue, new Job("again")).id(BAD)))
			.withMessageContaining("Task " + BAD + " of queue '" + queue + "' was corrupt in Redis");
		assertCorrupt(probe, detail);
		assertThat(probe.sched()).as("no longer indexed as scheduled").containsOnlyKeys(HEALTHY);
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void enqueueWithIdOfActiveTaskWithoutStateDeadLettersItAndTakesItOutOfLease() {
		String queue = "bad-enqueue-active-state";
		PartitionProbe probe = probe(queue);
		seedActive(queue);
		damage(probe, Damage.NO_STATE);
		Map<String, String> healthy = healthySnapshot(probe);
		assertThatExceptionOfType(DelayedTaskException.class)
			.isThrownBy(() -> this.fixture.scheduler.submit(TaskRequest.of(queue, new Job("again")).id(BAD)));
		assertCorrupt(probe, NO_STATE);
		assertThat(probe.lease()).containsOnlyKeys(HEALTHY);
		assertThat(healthySnapshot(probe)).isEqualTo(healthy);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void enqueueWithIdOfTaskWithoutPayloadReturnsExistingAndChangesNothing() {
		String queue = "bad-enqueue-payload";
		PartitionProbe probe = probe(queue);
		seedScheduled(queue, Duration.ofHours(1));
		damage(probe, Damage.NO_PAYLOAD);
		Map<String, String> before = probe.snapshot();
		ScheduleResult result = this.fixture.scheduler.submit(TaskRequest.of(queue, new Job("again")).id(BAD));
		assertThat(result.outcome()).isEqualTo(ScheduleResult.Outcome.EXISTING);
		assertThat(result.dueAt().toEpochMilli()).isEqualTo(probe.sched().get(BAD));
		assertThat(probe.snapshot()).isEqualTo(before);
	}

	// seeding

	private void seedScheduled(String queue, Duration delay) {
		for (String id : List.of(HEALTHY.get(0), BAD, HEALTHY.get(1))) {
			this.fixture.scheduler.schedule(TaskRequest.of(queue, new Job(id)).id(id).delay(delay));
		}
	}

	private void seedReady(String queue) {
		for (String id : List.of(HEALTHY.get(0), BAD, HEALTHY.get(1))) {
			this.fixture.scheduler.schedule(TaskRequest.of(queue, new Job(id)).id(id));
		}
	}

	private Map<String, ClaimedTask> seedActive(String queue) {
		seedReady(queue);
		Map<String, ClaimedTask> tasks = new LinkedHashMap<>();
		this.fixture.store.claim(queue, 3, "n1").tasks().forEach((task) -> tasks.put(task.id().value(), task));
		assertThat(tasks).containsOnlyKeys(HEALTHY.get(0), BAD, HEALTHY.get(1));
		return tasks;
	}

	private void seedDead(String queue) {
		seedActive(queue).values()
			.forEach((task) -> assertThat(this.fixture.store
				.fail(queue, task.lease(),
						new TaskFailure(null, FailureReason.NON_RETRYABLE, "java.lang.RuntimeException",
								task.id().value()))
				.kind()).isEqualTo(FailOutcome.Kind.DEAD));
	}

	private void damage(PartitionProbe probe, Damage damage) {
		switch (damage) {
			case NO_STATE -> this.fixture.redis.opsForHash().delete(probe.keys.task(BAD), "s");
			case WRONG_TYPE -> {
				this.fixture.redis.delete(probe.keys.task(BAD));
				this.fixture.redis.opsForValue().set(probe.keys.task(BAD), "not a hash");
			}
			case NO_PAYLOAD -> this.fixture.redis.delete(probe.keys.payload(BAD));
		}
	}

	// assertions

	private void assertCorrupt(PartitionProbe probe, String detail) {
		assertThat(probe.dead()).containsKey(BAD);
		assertThat(probe.error(BAD)).isEqualTo("corrupt\n\n" + detail);
		assertThat(probe.sched()).doesNotContainKey(BAD);
		assertThat(probe.lease()).doesNotContainKey(BAD);
		assertThat(probe.stat("corrupt")).isOne();
		if ("hash".equals(probe.type(probe.keys.task(BAD)))) {
			assertThat(probe.task(BAD)).containsEntry("s", "D").doesNotContainKey("k");
		}
	}

	private void assertClaimedHealthy(ClaimBatch batch) {
		assertThat(batch.tasks()).extracting((task) -> task.id().value()).containsExactlyInAnyOrderElementsOf(HEALTHY);
		assertThat(batch.tasks()).allSatisfy(
				(task) -> assertThat(task.envelope()).isEqualTo("{\"h\":{},\"b\":{\"name\":\"" + task.id() + "\"}}"));
	}

	private void assertAllTasksGone(PartitionProbe probe) {
		for (String id : List.of(HEALTHY.get(0), BAD, HEALTHY.get(1))) {
			assertThat(probe.taskKeys(id)).isEmpty();
		}
		assertThat(probe.lease()).isEmpty();
		assertThat(probe.dead()).isEmpty();
	}

	/** Wait until every lease has expired past the grace, then let a claim reap. */
	private void reapAll(PartitionProbe probe) {
		probe.awaitAfter(
				probe.lease().values().stream().mapToLong(Long::longValue).max().getAsLong() + GRACE.toMillis());
		assertThat(this.fixture.store.claim(probe.keys.queue(), 0, "reaper").tasks()).isEmpty();
		assertThat(probe.lease()).isEmpty();
	}

	/** The healthy tasks' keys and index entries. */
	private Map<String, String> healthySnapshot(PartitionProbe probe) {
		Map<String, String> snapshot = new LinkedHashMap<>();
		for (String id : HEALTHY) {
			snapshot.put(id,
					probe.task(id) + " p=" + probe.payload(id) + " e=" + probe.error(id) + " sched="
							+ probe.sched().get(id) + " lease=" + probe.lease().get(id) + " dead="
							+ probe.dead().get(id) + " ready=" + probe.ready().contains(id));
		}
		return snapshot;
	}

	private static List<Lease> leases(Map<String, ClaimedTask> tasks) {
		return List.of(tasks.get(HEALTHY.get(0)).lease(), tasks.get(BAD).lease(), tasks.get(HEALTHY.get(1)).lease());
	}

	private static TaskFailure retryInOneMinute() {
		return new TaskFailure(Duration.ofMinutes(1), FailureReason.NON_RETRYABLE, "java.lang.RuntimeException",
				"retry later");
	}

	private PartitionProbe probe(String queue) {
		return new PartitionProbe(this.fixture, queue);
	}

	enum Damage {

		NO_STATE, WRONG_TYPE, NO_PAYLOAD

	}

	record Job(String name) {
	}

}

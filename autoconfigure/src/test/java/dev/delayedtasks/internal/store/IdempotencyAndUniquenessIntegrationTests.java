package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.ScheduleResult.Outcome;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.producer.RedisDelayedTaskScheduler;
import dev.delayedtasks.internal.store.script.ScriptCallRecordingTemplate;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scheduling is idempotent on the task id while the task exists, and a unique key (given,
 * or the payload's digest) lets one task stand for equal requests within its window.
 */
@WithRedis
class IdempotencyAndUniquenessIntegrationTests {

	private StoreFixture fixture;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	// idempotency by id

	@Test
	void resendingSameIdReturnsExistingTaskWithoutCreatingAnother() {
		PartitionProbe probe = probe("idem-resend");
		ScheduleResult first = this.fixture.scheduler
			.submit(TaskRequest.of("idem-resend", Map.of("v", 1)).id("order-42-reminder").delay(Duration.ofHours(1)));
		Map<String, String> before = probe.snapshot();
		ScheduleResult second = this.fixture.scheduler
			.submit(TaskRequest.of("idem-resend", Map.of("v", 2)).id("order-42-reminder").delay(Duration.ofHours(5)));
		assertThat(first.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(second.outcome()).isEqualTo(Outcome.EXISTING);
		assertThat(second.id()).isEqualTo(first.id()).isEqualTo(TaskId.of("order-42-reminder"));
		assertThat(second.dueAt()).as("the existing task's due time").isEqualTo(first.dueAt());
		assertThat(second.created()).isFalse();
		assertThat(probe.snapshot()).as("nothing written, payload and due time kept").isEqualTo(before);
		assertThat(probe.payload("order-42-reminder")).contains("\"v\":1");
		assertThat(probe.stat("enq")).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void resendingIdOfActiveTaskReturnsExisting() {
		PartitionProbe probe = probe("idem-active");
		this.fixture.scheduler.submit(TaskRequest.of("idem-active", Map.of("v", 1)).id("job-1"));
		this.fixture.store.claim("idem-active", 1, "n1");
		ScheduleResult again = this.fixture.scheduler.submit(TaskRequest.of("idem-active", Map.of("v", 1)).id("job-1"));
		assertThat(again.outcome()).isEqualTo(Outcome.EXISTING);
		assertThat(probe.task("job-1")).containsEntry("s", "A");
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void resendingIdAfterCompletionCreatesNewTask() {
		PartitionProbe probe = probe("idem-done");
		this.fixture.scheduler.submit(TaskRequest.of("idem-done", Map.of("v", 1)).id("job-1"));
		ClaimedTask task = this.fixture.store.claim("idem-done", 1, "n1").tasks().get(0);
		this.fixture.store.ack("idem-done", List.of(task.lease()));
		ScheduleResult again = this.fixture.scheduler.submit(TaskRequest.of("idem-done", Map.of("v", 1)).id("job-1"));
		assertThat(again.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(probe.task("job-1")).containsEntry("s", "R").containsEntry("v", "0");
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void resendingIdOfADeadLetteredTaskReturnsExistingAndLeavesTheDeadLetterAsItIs() {
		PartitionProbe probe = probe("idem-dead");
		ScheduleResult first = this.fixture.scheduler.submit(TaskRequest.of("idem-dead", Map.of("v", 1)).id("job-1"));
		ClaimedTask task = this.fixture.store.claim("idem-dead", 1, "n1").tasks().get(0);
		this.fixture.store.fail("idem-dead", task.lease(),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, "java.lang.RuntimeException", "fatal"));
		assertThat(probe.dead()).containsOnlyKeys("job-1");
		Map<String, String> before = probe.snapshot();
		ScheduleResult again = this.fixture.scheduler
			.submit(TaskRequest.of("idem-dead", Map.of("v", 2)).id("job-1").delay(Duration.ofMinutes(5)));
		assertThat(again.outcome()).isEqualTo(Outcome.EXISTING);
		assertThat(again.id()).isEqualTo(first.id());
		assertThat(probe.snapshot()).as("nothing written: the dead letter keeps its payload and error")
			.isEqualTo(before);
		assertThat(probe.task("job-1")).containsEntry("s", "D");
		assertThat(probe.payload("job-1")).contains("\"v\":1");
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.sched()).isEmpty();
		assertThat(probe.violations()).isEmpty();
		// Purged, the id is free again.
		assertThat(this.fixture.deadLetters.purge("idem-dead")).isOne();
		ScheduleResult afterPurge = this.fixture.scheduler
			.submit(TaskRequest.of("idem-dead", Map.of("v", 3)).id("job-1"));
		assertThat(afterPurge.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(probe.task("job-1")).containsEntry("s", "R").containsEntry("a", "0");
		assertThat(probe.payload("job-1")).contains("\"v\":3");
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void reschedulingIdAfterCancelOfReadyTaskReplacesTheTombstone() {
		PartitionProbe probe = probe("idem-tombstone");
		TaskId id = this.fixture.scheduler.schedule(TaskRequest.of("idem-tombstone", Map.of("v", 1)).id("job-1"));
		assertThat(this.fixture.scheduler.cancel("idem-tombstone", id)).isTrue();
		assertThat(probe.task("job-1")).containsEntry("s", "X");
		ScheduleResult again = this.fixture.scheduler
			.submit(TaskRequest.of("idem-tombstone", Map.of("v", 2)).id("job-1"));
		assertThat(again.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(again.id()).isEqualTo(id);
		assertThat(probe.task("job-1")).containsEntry("s", "R").containsEntry("a", "0").containsEntry("f", "0");
		assertThat(probe.pttl(probe.keys.task("job-1"))).as("no longer an expiring tombstone").isEqualTo(-1);
		assertThat(probe.payload("job-1")).contains("\"v\":2");
		assertThat(probe.stat("enq")).isEqualTo(2);
		assertThat(probe.violations()).isEmpty();
		ClaimBatch batch = this.fixture.store.claim("idem-tombstone", 4, "n1");
		assertThat(batch.tasks()).as("claimed once although two hints name it")
			.extracting(ClaimedTask::id)
			.containsExactly(id);
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.stat("ghost")).isZero();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void reschedulingIdAfterCancelOfScheduledTaskCreatesItAgain() {
		PartitionProbe probe = probe("idem-cancel-s");
		TaskId id = this.fixture.scheduler
			.schedule(TaskRequest.of("idem-cancel-s", Map.of("v", 1)).id("job-1").delay(Duration.ofHours(1)));
		this.fixture.scheduler.cancel("idem-cancel-s", id);
		ScheduleResult again = this.fixture.scheduler
			.submit(TaskRequest.of("idem-cancel-s", Map.of("v", 1)).id("job-1").delay(Duration.ofHours(1)));
		assertThat(again.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(probe.sched()).containsOnlyKeys("job-1");
		assertThat(probe.violations()).isEmpty();
	}

	// uniqueness with an explicit key

	@Test
	void uniqueKeyReturnsDuplicateWithFirstTaskWhilePending() {
		PartitionProbe probe = probe("uniq-key");
		ScheduleResult first = this.fixture.scheduler.submit(TaskRequest.of("uniq-key", Map.of("v", 1))
			.uniqueKey("user-7-welcome")
			.uniqueFor(Duration.ofHours(1))
			.delay(Duration.ofMinutes(10)));
		String digest = probe.task(first.id().value()).get("u");
		assertThat(digest).hasSize(16);
		String slot = probe.keys.unique(digest);
		assertThat(this.fixture.redis.opsForValue().get(slot)).isEqualTo(first.id().value());
		assertThat(probe.pttl(slot)).isBetween(Duration.ofMinutes(59).toMillis(), Duration.ofHours(1).toMillis());
		ScheduleResult second = this.fixture.scheduler.submit(TaskRequest.of("uniq-key", Map.of("v", 2))
			.uniqueKey("user-7-welcome")
			.uniqueFor(Duration.ofHours(1))
			.id("caller-id"));
		assertThat(first.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(second.outcome()).isEqualTo(Outcome.DUPLICATE);
		assertThat(second.id()).isEqualTo(first.id());
		assertThat(second.dueAt()).isEqualTo(first.dueAt());
		assertThat(probe.exists(probe.keys.task("caller-id"))).isFalse();
		assertThat(probe.sched()).containsOnlyKeys(first.id().value());
		assertThat(probe.ready()).isEmpty();
		assertThat(probe.stat("enq")).isOne();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void uniqueKeyStaysTakenWhileTaskRunsAndRetries() {
		PartitionProbe probe = probe("uniq-running");
		TaskRequest request = TaskRequest.of("uniq-running", Map.of("v", 1))
			.uniqueKey("k")
			.uniqueFor(Duration.ofHours(1));
		TaskId id = this.fixture.scheduler.schedule(request);
		ClaimedTask task = this.fixture.store.claim("uniq-running", 1, "n1").tasks().get(0);
		assertThat(this.fixture.scheduler.submit(request).outcome()).isEqualTo(Outcome.DUPLICATE);
		this.fixture.store.fail("uniq-running", task.lease(), new TaskFailure(Duration.ofMinutes(1),
				FailureReason.NON_RETRYABLE, "java.lang.RuntimeException", "retry"));
		ScheduleResult duringRetry = this.fixture.scheduler.submit(request);
		assertThat(duringRetry.outcome()).isEqualTo(Outcome.DUPLICATE);
		assertThat(duringRetry.id()).isEqualTo(id);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void sameUniqueKeyInAnotherQueueIsNotDuplicate() {
		ScheduleResult first = this.fixture.scheduler
			.submit(TaskRequest.of("uniq-queue-a", Map.of("v", 1)).uniqueKey("same").uniqueFor(Duration.ofHours(1)));
		ScheduleResult second = this.fixture.scheduler
			.submit(TaskRequest.of("uniq-queue-b", Map.of("v", 1)).uniqueKey("same").uniqueFor(Duration.ofHours(1)));
		assertThat(first.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(second.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(probe("uniq-queue-a").violations()).isEmpty();
		assertThat(probe("uniq-queue-b").violations()).isEmpty();
	}

	// uniqueness by payload

	@Test
	void uniqueForWithoutKeyDedupsEqualPayloadsWhateverTheMapOrder() {
		PartitionProbe probe = probe("uniq-payload");
		Map<String, Object> ab = new LinkedHashMap<>();
		ab.put("user", 7);
		ab.put("template", "welcome");
		ab.put("nested", new LinkedHashMap<>(Map.of("x", 1)));
		Map<String, Object> ba = new LinkedHashMap<>();
		ba.put("nested", new LinkedHashMap<>(Map.of("x", 1)));
		ba.put("template", "welcome");
		ba.put("user", 7);
		ScheduleResult first = this.fixture.scheduler
			.submit(TaskRequest.of("uniq-payload", ab).uniqueFor(Duration.ofHours(1)));
		ScheduleResult second = this.fixture.scheduler
			.submit(TaskRequest.of("uniq-payload", ba).uniqueFor(Duration.ofHours(1)));
		ScheduleResult record = this.fixture.scheduler
			.submit(TaskRequest.of("uniq-payload", new Welcome(7, "welcome")).uniqueFor(Duration.ofHours(1)));
		ScheduleResult sameRecord = this.fixture.scheduler
			.submit(TaskRequest.of("uniq-payload", new Welcome(7, "welcome")).uniqueFor(Duration.ofHours(1)));
		assertThat(first.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(second.outcome()).isEqualTo(Outcome.DUPLICATE);
		assertThat(second.id()).isEqualTo(first.id());
		assertThat(record.outcome()).as("different JSON").isEqualTo(Outcome.CREATED);
		assertThat(sameRecord.outcome()).isEqualTo(Outcome.DUPLICATE);
		assertThat(sameRecord.id()).isEqualTo(record.id());
		assertThat(probe.ready()).containsExactly(first.id().value(), record.id().value());
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void uniqueForWithoutKeyKeepsDifferentPayloadsApart() {
		PartitionProbe probe = probe("uniq-payload-diff");
		ScheduleResult first = this.fixture.scheduler
			.submit(TaskRequest.of("uniq-payload-diff", Map.of("user", 7)).uniqueFor(Duration.ofHours(1)));
		ScheduleResult second = this.fixture.scheduler
			.submit(TaskRequest.of("uniq-payload-diff", Map.of("user", 8)).uniqueFor(Duration.ofHours(1)));
		ScheduleResult third = this.fixture.scheduler
			.submit(TaskRequest.of("uniq-payload-diff", Map.of("user", "7")).uniqueFor(Duration.ofHours(1)));
		assertThat(List.of(first.outcome(), second.outcome(), third.outcome())).containsOnly(Outcome.CREATED);
		assertThat(probe.ready()).hasSize(3);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void uniqueForWithoutKeyDoesNotDedupAcrossQueues() {
		ScheduleResult first = this.fixture.scheduler
			.submit(TaskRequest.of("uniq-payload-q1", Map.of("user", 7)).uniqueFor(Duration.ofHours(1)));
		ScheduleResult second = this.fixture.scheduler
			.submit(TaskRequest.of("uniq-payload-q2", Map.of("user", 7)).uniqueFor(Duration.ofHours(1)));
		assertThat(first.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(second.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(probe("uniq-payload-q1").violations()).isEmpty();
		assertThat(probe("uniq-payload-q2").violations()).isEmpty();
	}

	@Test
	void requestsWithoutUniqueForAreNeverDeduped() {
		PartitionProbe probe = probe("uniq-none");
		TaskRequest plain = TaskRequest.of("uniq-none", Map.of("user", 7));
		assertThat(this.fixture.scheduler.submit(plain).outcome()).isEqualTo(Outcome.CREATED);
		assertThat(this.fixture.scheduler.submit(plain).outcome()).isEqualTo(Outcome.CREATED);
		assertThat(probe.ready()).hasSize(2);
		assertThat(probe.allKeys()).noneMatch((key) -> key.startsWith(probe.keys.base() + "u:"));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void payloadDedupIgnoresHeaders() {
		PartitionProbe probe = probe("uniq-headers");
		TaskRequest request = TaskRequest.of("uniq-headers", Map.of("user", 7)).uniqueFor(Duration.ofHours(1));
		ScheduleResult first = this.fixture.scheduler.submit(request.header("trace", "a"));
		ScheduleResult second = this.fixture.scheduler.submit(request.header("trace", "b"));
		assertThat(first.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(second.outcome()).isEqualTo(Outcome.DUPLICATE);
		assertThat(second.id()).isEqualTo(first.id());
		assertThat(probe.payload(first.id().value())).contains("\"trace\":\"a\"");
		assertThat(probe.violations()).isEmpty();
	}

	// the slot is released when the task ends

	@Test
	void ackReleasesUniqueSlot() {
		PartitionProbe probe = probe("uniq-ack");
		TaskRequest request = uniqueRequest("uniq-ack");
		TaskId first = this.fixture.scheduler.schedule(request);
		ClaimedTask task = this.fixture.store.claim("uniq-ack", 1, "n1").tasks().get(0);
		this.fixture.store.ack("uniq-ack", List.of(task.lease()));
		assertThat(probe.allKeys()).noneMatch((key) -> key.startsWith(probe.keys.base() + "u:"));
		ScheduleResult next = this.fixture.scheduler.submit(request);
		assertThat(next.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(next.id()).isNotEqualTo(first);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void cancelOfScheduledTaskReleasesUniqueSlot() {
		PartitionProbe probe = probe("uniq-cancel-s");
		TaskRequest request = uniqueRequest("uniq-cancel-s").delay(Duration.ofHours(1));
		TaskId first = this.fixture.scheduler.schedule(request);
		this.fixture.scheduler.cancel("uniq-cancel-s", first);
		assertThat(probe.allKeys()).noneMatch((key) -> key.startsWith(probe.keys.base() + "u:"));
		ScheduleResult next = this.fixture.scheduler.submit(request);
		assertThat(next.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(next.id()).isNotEqualTo(first);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void cancelOfReadyTaskReleasesUniqueSlot() {
		PartitionProbe probe = probe("uniq-cancel-r");
		TaskRequest request = uniqueRequest("uniq-cancel-r");
		TaskId first = this.fixture.scheduler.schedule(request);
		this.fixture.scheduler.cancel("uniq-cancel-r", first);
		assertThat(probe.allKeys()).noneMatch((key) -> key.startsWith(probe.keys.base() + "u:"));
		ScheduleResult next = this.fixture.scheduler.submit(request);
		assertThat(next.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(next.id()).isNotEqualTo(first);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void deadLetteringReleasesUniqueSlot() {
		PartitionProbe probe = probe("uniq-dead");
		TaskRequest request = uniqueRequest("uniq-dead");
		TaskId first = this.fixture.scheduler.schedule(request);
		ClaimedTask task = this.fixture.store.claim("uniq-dead", 1, "n1").tasks().get(0);
		this.fixture.store.fail("uniq-dead", task.lease(),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, "java.lang.RuntimeException", "fatal"));
		assertThat(probe.allKeys()).noneMatch((key) -> key.startsWith(probe.keys.base() + "u:"));
		ScheduleResult next = this.fixture.scheduler.submit(request);
		assertThat(next.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(next.id()).isNotEqualTo(first);
		assertThat(probe.dead()).containsOnlyKeys(first.value());
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void expiredUniqueWindowLetsNewTaskIn() {
		PartitionProbe probe = probe("uniq-expired");
		// Long enough that the second request, on a loaded machine, is still inside it.
		Duration window = Duration.ofSeconds(2);
		TaskRequest request = TaskRequest.of("uniq-expired", Map.of("v", 1))
			.uniqueKey("short")
			.uniqueFor(window)
			.delay(Duration.ofHours(1));
		ScheduleResult first = this.fixture.scheduler.submit(request);
		assertThat(this.fixture.scheduler.submit(request).outcome()).isEqualTo(Outcome.DUPLICATE);
		// Redis expires a key only once its deadline has passed: wait clear of the
		// boundary.
		probe.awaitAfter(first.dueAt().minus(Duration.ofHours(1)).toEpochMilli() + window.toMillis() + 10);
		ScheduleResult next = this.fixture.scheduler.submit(request);
		assertThat(next.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(next.id()).isNotEqualTo(first.id());
		assertThat(probe.sched()).containsOnlyKeys(first.id().value(), next.id().value());
		assertThat(this.fixture.redis.opsForValue().get(probe.keys.unique(probe.task(next.id().value()).get("u"))))
			.isEqualTo(next.id().value());
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void slotHeldByMissingTaskIsTakenOver() {
		PartitionProbe probe = probe("uniq-stale-slot");
		TaskRequest request = uniqueRequest("uniq-stale-slot");
		TaskId first = this.fixture.scheduler.schedule(request);
		String slot = probe.keys.unique(probe.task(first.value()).get("u"));
		this.fixture.redis
			.delete(List.of(probe.keys.task(first.value()), probe.keys.payload(first.value()), probe.keys.ready()));
		assertThat(this.fixture.redis.opsForValue().get(slot)).isEqualTo(first.value());
		ScheduleResult next = this.fixture.scheduler.submit(request);
		assertThat(next.outcome()).isEqualTo(Outcome.CREATED);
		assertThat(this.fixture.redis.opsForValue().get(slot)).isEqualTo(next.id().value());
		assertThat(probe.pttl(slot)).isPositive();
		assertThat(probe.violations()).isEmpty();
	}

	// scheduleAll

	@Test
	void scheduleAllReturnsResultsInRequestOrderWithOneScriptCallPerQueueAndBatch() {
		CountingTemplate counting = new CountingTemplate(this.fixture.connectionFactory);
		RedisDelayedTaskScheduler scheduler = new RedisDelayedTaskScheduler(new StoreScripts(counting),
				this.fixture.settings, this.fixture.codec, this.fixture.queues, (queue) -> 4, 3,
				new DelayedTaskListener() {
				}, ObservationRegistry.NOOP, null);
		this.fixture.scheduler.schedule(TaskRequest.of("batch-b", Map.of("v", 0)).id("b-existing"));
		List<TaskRequest> requests = new ArrayList<>();
		String[] plan = { "batch-a:a0", "batch-b:b0", "batch-a:a1", "batch-c:c0", "batch-a:a2", "batch-b:b-existing",
				"batch-a:a3", "batch-b:b1", "batch-a:a4", "batch-b:b2", "batch-a:a5", "batch-a:a6", "batch-a:a1" };
		for (String entry : plan) {
			String[] parts = entry.split(":");
			requests.add(TaskRequest.of(parts[0], Map.of("id", parts[1])).id(parts[1]).delay(Duration.ofMinutes(5)));
		}
		List<ScheduleResult> results = scheduler.scheduleAll(requests);
		assertThat(results).extracting((result) -> result.id().value())
			.containsExactly("a0", "b0", "a1", "c0", "a2", "b-existing", "a3", "b1", "a4", "b2", "a5", "a6", "a1");
		assertThat(results).extracting(ScheduleResult::outcome)
			.containsExactly(Outcome.CREATED, Outcome.CREATED, Outcome.CREATED, Outcome.CREATED, Outcome.CREATED,
					Outcome.EXISTING, Outcome.CREATED, Outcome.CREATED, Outcome.CREATED, Outcome.CREATED,
					Outcome.CREATED, Outcome.CREATED, Outcome.EXISTING);
		// a: 8 requests -> batches of 3, 3, 2; b: 4 -> 3, 1; c: 1 -> 1
		assertThat(counting.calls).extracting((keys) -> queueOf(keys.get(0)) + "x" + (keys.size() - 6) / 3)
			.containsExactly("batch-ax3", "batch-ax3", "batch-ax2", "batch-bx3", "batch-bx1", "batch-cx1");
		assertThat(counting.calls).allSatisfy((keys) -> assertThat(keys)
			.allMatch((key) -> key.startsWith(this.fixture.keys(queueOf(keys.get(0))).base())));
		assertThat(probe("batch-a").sched()).containsOnlyKeys("a0", "a1", "a2", "a3", "a4", "a5", "a6");
		assertThat(probe("batch-b").sched()).containsOnlyKeys("b0", "b1", "b2");
		assertThat(probe("batch-c").sched()).containsOnlyKeys("c0");
		for (String queue : List.of("batch-a", "batch-b", "batch-c")) {
			assertThat(probe(queue).violations()).isEmpty();
		}
	}

	@Test
	void scheduleAllOfNothingReturnsNothingWithoutCallingRedis() {
		CountingTemplate counting = new CountingTemplate(this.fixture.connectionFactory);
		RedisDelayedTaskScheduler scheduler = new RedisDelayedTaskScheduler(new StoreScripts(counting),
				this.fixture.settings, this.fixture.codec, this.fixture.queues, (queue) -> 4, 3,
				new DelayedTaskListener() {
				}, ObservationRegistry.NOOP, null);
		assertThat(scheduler.scheduleAll(List.of())).isEmpty();
		assertThat(counting.calls).isEmpty();
	}

	@Test
	void scheduleAllDedupsByUniqueKeyWithinOneBatch() {
		PartitionProbe probe = probe("batch-unique");
		TaskRequest request = uniqueRequest("batch-unique");
		List<ScheduleResult> results = this.fixture.scheduler.scheduleAll(List.of(request, request, request));
		assertThat(results).extracting(ScheduleResult::outcome)
			.containsExactly(Outcome.CREATED, Outcome.DUPLICATE, Outcome.DUPLICATE);
		assertThat(results).extracting(ScheduleResult::id).containsOnly(results.get(0).id());
		assertThat(probe.ready()).containsExactly(results.get(0).id().value());
		assertThat(probe.violations()).isEmpty();
	}

	private String queueOf(String key) {
		String prefix = this.fixture.settings.keyPrefix() + ":{";
		return key.substring(prefix.length(), key.indexOf(":0}:"));
	}

	private TaskRequest uniqueRequest(String queue) {
		return TaskRequest.of(queue, Map.of("user", 7)).uniqueKey("user-7").uniqueFor(Duration.ofHours(1));
	}

	private PartitionProbe probe(String queue) {
		return new PartitionProbe(this.fixture, queue);
	}

	/** Records the keys of every script call. */
	static final class CountingTemplate extends ScriptCallRecordingTemplate {

		final List<List<String>> calls = new CopyOnWriteArrayList<>();

		CountingTemplate(RedisConnectionFactory connectionFactory) {
			super(connectionFactory);
		}

		@Override
		protected void onScriptCall(List<String> keys, List<String> args) {
			this.calls.add(List.copyOf(keys));
		}

	}

	record Welcome(int user, String template) {
	}

}

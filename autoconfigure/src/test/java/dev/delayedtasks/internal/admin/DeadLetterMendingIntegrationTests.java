package dev.delayedtasks.internal.admin;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.DeadLetterListing;
import dev.delayedtasks.internal.store.PartitionProbe;
import dev.delayedtasks.internal.store.StoreFixture;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.internal.store.script.Reply;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Mending dead letters one by one ({@link RedisDeadLetters}): reading a dead letter's
 * payload, redriving it with a new payload (headers kept, the replacement and the redrive
 * one step, a payload changed meanwhile never overwritten), deleting one, and walking a
 * large dead set in bounded steps.
 */
@WithRedis
class DeadLetterMendingIntegrationTests {

	private StoreFixture fixture;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void payloadShowsTheBodyOfADeadLetterOnly() {
		String queue = "mend-read";
		TaskId dead = deadLetter(queue, TaskRequest.of(queue, new Order("A-1", "12")).header("tenant", "t1"));
		TaskId live = this.fixture.scheduler.schedule(queue, new Order("A-2", "1"), Duration.ofHours(1));
		assertThat(this.fixture.deadLetters.payload(queue, dead)).hasValue("{\"number\":\"A-1\",\"quantity\":\"12\"}");
		assertThat(this.fixture.deadLetters.payload(queue, live)).as("not a dead letter").isEmpty();
		assertThat(this.fixture.deadLetters.payload(queue, TaskId.of("unknown"))).isEmpty();
	}

	@Test
	void redriveWithANewPayloadReplacesItKeepsTheHeadersAndMakesTheTaskReady() {
		String queue = "mend-redrive";
		PartitionProbe probe = new PartitionProbe(this.fixture, queue);
		TaskId dead = deadLetter(queue, TaskRequest.of(queue, new Order("A-1", "twelve")).header("tenant", "t1"));
		TaskId other = deadLetter(queue, TaskRequest.of(queue, new Order("A-2", "two")));
		assertThat(this.fixture.deadLetters.redrive(queue, dead, Map.of("number", "A-1", "quantity", 12))).isTrue();
		assertThat(probe.ready()).containsExactly(dead.value());
		assertThat(probe.task(dead.value())).containsEntry("s", "R").containsEntry("a", "0");
		assertThat(this.fixture.codec.read(probe.payload(dead.value())).headers()).containsEntry("tenant", "t1");
		assertThat(this.fixture.codec.read(probe.payload(dead.value())).body().get("quantity").asInt()).isEqualTo(12);
		assertThat(this.fixture.deadLetters.list(queue, 10)).extracting(DeadLetter::id).containsExactly(other);
		ClaimedTask claimed = this.fixture.store.claim(queue, 1, "n1").tasks().get(0);
		assertThat(claimed.id()).isEqualTo(dead);
		assertThat(this.fixture.deadLetters.redrive(queue, dead, Map.of("number", "A-1"))).as("no longer dead")
			.isFalse();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void redriveWithANewPayloadChangesNothingWhenTheStoredPayloadChangedMeanwhile() {
		String queue = "mend-race";
		PartitionProbe probe = new PartitionProbe(this.fixture, queue);
		TaskId dead = deadLetter(queue, TaskRequest.of(queue, new Order("A-1", "x")));
		String stored = probe.payload(dead.value());
		String elses = this.fixture.codec.envelope(queue, new Order("A-1", "by someone else"), Map.of());
		this.fixture.redis.opsForValue().set(probe.keys.payload(dead.value()), elses);
		String mine = this.fixture.codec.envelope(queue, new Order("A-1", "mine"), Map.of());
		// The script as the Java side calls it, with the payload it had read before the
		// other edit.
		Reply reply = new Reply(this.fixture.scripts.run(Script.REDRIVE,
				List.of(probe.keys.dead(), probe.keys.ready(), probe.keys.wake(), probe.keys.stats()),
				List.of(probe.keys.base(), "16", "500", "0", dead.value(), mine, stored), queue, dead.value()));
		assertThat(reply.number(1)).isEqualTo(-2);
		assertThat(probe.payload(dead.value())).isEqualTo(elses);
		assertThat(probe.dead()).containsKey(dead.value());
		assertThat(probe.ready()).isEmpty();
	}

	@Test
	void redriveWithAPayloadOverTheSizeLimitIsRefusedAndTheDeadLetterStays() {
		String queue = "mend-too-big";
		PartitionProbe probe = new PartitionProbe(this.fixture, queue);
		TaskId dead = deadLetter(queue, TaskRequest.of(queue, new Order("A-1", "x")));
		String before = probe.payload(dead.value());
		assertThatExceptionOfType(RuntimeException.class)
			.isThrownBy(() -> this.fixture.deadLetters.redrive(queue, dead, Map.of("blob", "x".repeat(70_000))))
			.withMessageContaining("mend-too-big");
		assertThat(probe.payload(dead.value())).isEqualTo(before);
		assertThat(probe.dead()).containsKey(dead.value());
	}

	@Test
	void deleteRemovesOneDeadLetterAndItsKeysAndNothingElse() {
		String queue = "mend-delete";
		PartitionProbe probe = new PartitionProbe(this.fixture, queue);
		TaskId gone = deadLetter(queue, TaskRequest.of(queue, new Order("A-1", "x")));
		TaskId kept = deadLetter(queue, TaskRequest.of(queue, new Order("A-2", "x")));
		TaskId live = this.fixture.scheduler.schedule(queue, new Order("A-3", "x"), Duration.ofHours(1));
		assertThat(this.fixture.deadLetters.delete(queue, gone)).isTrue();
		assertThat(probe.dead()).containsOnlyKeys(kept.value());
		assertThat(probe.type(probe.keys.task(gone.value()))).isEqualTo("none");
		assertThat(probe.type(probe.keys.payload(gone.value()))).isEqualTo("none");
		assertThat(probe.stat("purged")).isEqualTo(1);
		assertThat(this.fixture.deadLetters.delete(queue, gone)).as("gone already").isFalse();
		assertThat(this.fixture.deadLetters.delete(queue, live)).as("not a dead letter").isFalse();
		assertThat(this.fixture.scheduler.find(queue, live)).isPresent();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void aListingFromAnOffsetWalksTheDeadSetNewestFirstInBoundedSteps() {
		String queue = "mend-walk";
		List<TaskId> ids = new ArrayList<>();
		for (int i = 0; i < 7; i++) {
			ids.add(deadLetter(queue, TaskRequest.of(queue, new Order("A-" + i, "x"))));
		}
		List<TaskId> walked = new ArrayList<>();
		long offset = 0;
		while (true) {
			DeadLetterListing step = this.fixture.deadLetters.listing(queue, offset, 3);
			if (step.letters().isEmpty()) {
				break;
			}
			assertThat(step.letters()).hasSizeLessThanOrEqualTo(3);
			step.letters().forEach((letter) -> walked.add(letter.id()));
			offset += step.letters().size() + step.unreadable();
		}
		assertThat(walked).containsExactlyElementsOf(reversed(ids));
	}

	private TaskId deadLetter(String queue, TaskRequest request) {
		PartitionProbe probe = new PartitionProbe(this.fixture, queue);
		long before = probe.dead().values().stream().mapToLong(Long::longValue).max().orElse(0);
		TaskId id = this.fixture.scheduler.schedule(request.maxAttempts(1));
		ClaimedTask task = this.fixture.store.claim(queue, 1, "n1").tasks().get(0);
		assertThat(task.id()).isEqualTo(id);
		this.fixture.store.fail(queue, task.lease(),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, "com.example.BadInput", "quantity is not a number"));
		// Dead-letter times in order, so that newest-first is well defined.
		probe.awaitAfter(Math.max(before, probe.dead().get(id.value())));
		return id;
	}

	private static List<TaskId> reversed(List<TaskId> ids) {
		List<TaskId> reversed = new ArrayList<>(ids);
		Collections.reverse(reversed);
		return reversed;
	}

	record Order(String number, String quantity) {
	}

}

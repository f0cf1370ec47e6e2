package dev.delayedtasks.internal.admin;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.admin.RedisDeadLetters.DeadLetterPage;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.PartitionProbe;
import dev.delayedtasks.internal.store.StoreFixture;
import dev.delayedtasks.internal.store.TaskFailure;
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
		Instant deadAt = this.fixture.deadLetters.deadAt(queue, dead).orElseThrow();
		assertThat(this.fixture.deadLetters.redrive(queue, dead, deadAt, Map.of("number", "A-1", "quantity", 12)))
			.isTrue();
		assertThat(probe.ready()).containsExactly(dead.value());
		assertThat(probe.task(dead.value())).containsEntry("s", "R").containsEntry("a", "0");
		assertThat(this.fixture.codec.read(probe.payload(dead.value())).headers()).containsEntry("tenant", "t1");
		assertThat(this.fixture.codec.read(probe.payload(dead.value())).body().get("quantity").asInt()).isEqualTo(12);
		assertThat(this.fixture.deadLetters.list(queue, 10)).extracting(DeadLetter::id).containsExactly(other);
		ClaimedTask claimed = this.fixture.store.claim(queue, 1, "n1").tasks().get(0);
		assertThat(claimed.id()).isEqualTo(dead);
		assertThat(this.fixture.deadLetters.redrive(queue, dead, deadAt, Map.of("number", "A-1"))).as("no longer dead")
			.isFalse();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void aSecondEditorDoesNotOverwriteAPayloadRedrivenAndDeadAgainSinceItWasRead() {
		String queue = "mend-race";
		PartitionProbe probe = new PartitionProbe(this.fixture, queue);
		TaskId dead = deadLetter(queue, TaskRequest.of(queue, new Order("A-1", "x")));
		// Both editors read the dead letter; B mends it first, and it dies again.
		Instant seenByBoth = this.fixture.deadLetters.deadAt(queue, dead).orElseThrow();
		assertThat(this.fixture.deadLetters.redrive(queue, dead, seenByBoth, new Order("A-1", "by B"))).isTrue();
		ClaimedTask again = this.fixture.store.claim(queue, 1, "n1").tasks().get(0);
		probe.awaitAfter(seenByBoth.toEpochMilli());
		this.fixture.store.fail(queue, again.lease(),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, "com.example.BadInput", "still bad"));
		String byB = probe.payload(dead.value());
		assertThat(this.fixture.deadLetters.redrive(queue, dead, seenByBoth, new Order("A-1", "by A")))
			.as("A's edit of what it read")
			.isFalse();
		assertThat(probe.payload(dead.value())).isEqualTo(byB).contains("by B");
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
			.isThrownBy(() -> this.fixture.deadLetters.redrive(queue, dead,
					this.fixture.deadLetters.deadAt(queue, dead).orElseThrow(), Map.of("blob", "x".repeat(70_000))))
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
	void pagesByDeadLetterTimeWalkTheDeadSetNewestFirstWhateverOthersRemoveMeanwhile() {
		String queue = "mend-walk";
		List<TaskId> ids = new ArrayList<>();
		for (int i = 0; i < 9; i++) {
			ids.add(deadLetter(queue, TaskRequest.of(queue, new Order("A-" + i, "x"))));
		}
		List<TaskId> walked = new ArrayList<>();
		double from = Double.POSITIVE_INFINITY;
		long skip = 0;
		while (true) {
			DeadLetterPage page = this.fixture.deadLetters.page(queue, from, skip, 3);
			if (page.read() == 0) {
				break;
			}
			assertThat(page.letters()).hasSizeLessThanOrEqualTo(3);
			page.letters().forEach((letter) -> walked.add(letter.id()));
			skip = (page.lastDeadAt() == from) ? skip + page.readAtLast() : page.readAtLast();
			from = page.lastDeadAt();
			// Someone else deletes the oldest dead letter between two steps: no dead
			// letter is passed over.
			if (walked.size() == 3) {
				this.fixture.deadLetters.delete(queue, ids.get(0));
			}
		}
		List<TaskId> expected = reversed(ids.subList(1, ids.size()));
		assertThat(walked).containsExactlyElementsOf(expected);
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

package dev.delayedtasks.internal.admin;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo.TaskError;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.BoundedStackTrace;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.PartitionProbe;
import dev.delayedtasks.internal.store.StoreFixture;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.internal.store.TaskStore.FailOutcome;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisDeadLetters}: listing (newest first, structured error, never the payload),
 * counting, redriving, purging, and the trimming by count and age that keeps the dead set
 * bounded.
 */
@WithRedis
class DeadLettersIntegrationTests {

	private static final String SECRET = "card-4111-1111-1111-1111";

	/**
	 * The dead-letter max age of the trimming tests: long enough that the dead letters
	 * made one after another, on a loaded machine, are all younger than it.
	 */
	private static final Duration MAX_AGE = Duration.ofSeconds(2);

	private TestRedis testRedis;

	private StoreFixture fixture;

	private final List<StoreFixture> extraFixtures = new ArrayList<>();

	@BeforeEach
	void setUp(TestRedis redis) {
		this.testRedis = redis;
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
		this.extraFixtures.forEach(StoreFixture::close);
	}

	// list and count

	@Test
	void listReturnsNewestFirstWithReasonExceptionMessageAttemptsAndTime() {
		String queue = "dl-list";
		PartitionProbe probe = probe(this.fixture, queue);
		FailOutcome[] outcomes = new FailOutcome[3];
		TaskId first = this.fixture.scheduler.schedule(TaskRequest.of(queue, new Secret(SECRET)).maxAttempts(1));
		outcomes[0] = fail(this.fixture, queue, Duration.ZERO, "java.io.IOException", "disk full");
		probe.awaitAfter(outcomes[0].now());
		TaskId second = this.fixture.scheduler.enqueue(queue, new Secret(SECRET));
		outcomes[1] = fail(this.fixture, queue, null, "com.example.BadInput", "no such user");
		probe.awaitAfter(outcomes[1].now());
		TaskId third = this.fixture.scheduler.enqueue(queue, new Secret(SECRET));
		assertThat(fail(this.fixture, queue, Duration.ZERO, "java.lang.IllegalStateException", "first try").kind())
			.isEqualTo(FailOutcome.Kind.RETRY_READY);
		outcomes[2] = fail(this.fixture, queue, null, "java.lang.IllegalStateException", "third");
		List<DeadLetter> letters = this.fixture.deadLetters.list(queue, 10);
		assertThat(letters).containsExactly(
				new DeadLetter(third, queue, "non-retryable", "java.lang.IllegalStateException", "third", 2,
						Instant.ofEpochMilli(outcomes[2].now())),
				new DeadLetter(second, queue, "non-retryable", "com.example.BadInput", "no such user", 1,
						Instant.ofEpochMilli(outcomes[1].now())),
				new DeadLetter(first, queue, "retries-exhausted", "java.io.IOException", "disk full", 1,
						Instant.ofEpochMilli(outcomes[0].now())));
		assertThat(letters).allSatisfy((letter) -> assertThat(letter.toString()).doesNotContain(SECRET));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void listHonoursTheLimit() {
		String queue = "dl-limit";
		List<TaskId> ids = deadLetters(this.fixture, queue, 5);
		assertThat(this.fixture.deadLetters.list(queue, 2)).extracting(DeadLetter::id)
			.containsExactly(ids.get(4), ids.get(3));
		assertThat(this.fixture.deadLetters.list(queue, 0)).isEmpty();
	}

	@Test
	void listOfQueueWithoutDeadLettersIsEmpty() {
		assertThat(this.fixture.deadLetters.list("dl-none", 10)).isEmpty();
		assertThat(this.fixture.deadLetters.count("dl-none")).isZero();
	}

	@Test
	void listShowsMaxDeliveriesAndCorruptDeadLetters() {
		String queue = "dl-reasons";
		PartitionProbe probe = probe(this.fixture, queue);
		TaskId id = this.fixture.scheduler.enqueue(queue, new Secret(SECRET));
		this.fixture.redis.opsForHash().delete(probe.keys.task(id.value()), "s");
		this.fixture.store.claim(queue, 1, "n1");
		assertThat(this.fixture.deadLetters.list(queue, 10)).singleElement().satisfies((letter) -> {
			assertThat(letter.reason()).isEqualTo("corrupt");
			assertThat(letter.exceptionType()).isEmpty();
			assertThat(letter.message()).isEqualTo("task hash has no state");
			assertThat(letter.attempts()).isZero();
		});
	}

	@Test
	void listShowsCorruptDeadLetterWhoseTaskKeyIsNotAHash() {
		String queue = "dl-not-a-hash";
		PartitionProbe probe = probe(this.fixture, queue);
		List<TaskId> ids = deadLetters(this.fixture, queue, 1);
		TaskId broken = this.fixture.scheduler.enqueue(queue, new Secret(SECRET));
		this.fixture.redis.delete(probe.keys.task(broken.value()));
		this.fixture.redis.opsForValue().set(probe.keys.task(broken.value()), "not a hash");
		probe.awaitAfter(probe.dead().get(ids.get(0).value()));
		this.fixture.store.claim(queue, 1, "n1");
		assertThat(this.fixture.deadLetters.list(queue, 10)).satisfiesExactly((letter) -> {
			assertThat(letter.id()).isEqualTo(broken);
			assertThat(letter.reason()).isEqualTo("corrupt");
			assertThat(letter.message()).isEqualTo("task key is not a hash");
			assertThat(letter.attempts()).isZero();
		}, (letter) -> assertThat(letter.id()).isEqualTo(ids.get(0)));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void countCountsDeadLettersOnly() {
		String queue = "dl-count";
		deadLetters(this.fixture, queue, 3);
		this.fixture.scheduler.enqueue(queue, new Secret("live"));
		this.fixture.scheduler.schedule(queue, new Secret("later"), Duration.ofHours(1));
		assertThat(this.fixture.deadLetters.count(queue)).isEqualTo(3);
	}

	// redrive

	@Test
	void redriveMakesOneDeadLetterReadyAndLeavesTheOthers() {
		String queue = "dl-redrive";
		PartitionProbe probe = probe(this.fixture, queue);
		List<TaskId> ids = deadLetters(this.fixture, queue, 3);
		assertThat(this.fixture.deadLetters.redrive(queue, ids.get(1))).isTrue();
		assertThat(this.fixture.deadLetters.count(queue)).isEqualTo(2);
		assertThat(this.fixture.deadLetters.list(queue, 10)).extracting(DeadLetter::id)
			.containsExactly(ids.get(2), ids.get(0));
		assertThat(probe.ready()).containsExactly(ids.get(1).value());
		assertThat(probe.task(ids.get(1).value())).containsEntry("s", "R").containsEntry("a", "0");
		assertThat(this.fixture.deadLetters.redrive(queue, ids.get(1))).as("no longer dead").isFalse();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void redriveOfTaskThatIsNotDeadReturnsFalseAndChangesNothing() {
		String queue = "dl-redrive-live";
		PartitionProbe probe = probe(this.fixture, queue);
		TaskId live = this.fixture.scheduler.schedule(queue, new Secret("x"), Duration.ofHours(1));
		var before = probe.snapshot();
		assertThat(this.fixture.deadLetters.redrive(queue, live)).isFalse();
		assertThat(this.fixture.deadLetters.redrive(queue, TaskId.of("unknown"))).isFalse();
		assertThat(probe.snapshot()).isEqualTo(before);
	}

	@Test
	void redriveAllMakesEveryRunnableDeadLetterReadyAndKeepsCorruptOnes() {
		String queue = "dl-redrive-all";
		PartitionProbe probe = probe(this.fixture, queue);
		List<TaskId> ids = deadLetters(this.fixture, queue, 4);
		this.fixture.redis.delete(probe.keys.payload(ids.get(2).value()));
		assertThat(this.fixture.deadLetters.redriveAll(queue)).isEqualTo(3);
		assertThat(this.fixture.deadLetters.list(queue, 10)).extracting(DeadLetter::id).containsExactly(ids.get(2));
		assertThat(probe.ready()).containsExactly(ids.get(0).value(), ids.get(1).value(), ids.get(3).value());
		assertThat(probe.stat("redriven")).isEqualTo(3);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void redriveAllWorksThroughMoreThanOneBatch() {
		String queue = "dl-redrive-many";
		PartitionProbe probe = probe(this.fixture, queue);
		List<TaskId> ids = deadLetters(this.fixture, queue, 520);
		// a corrupt entry in the first batch must not stop the loop
		this.fixture.redis.delete(probe.keys.payload(ids.get(0).value()));
		assertThat(this.fixture.deadLetters.redriveAll(queue)).isEqualTo(519);
		assertThat(this.fixture.deadLetters.count(queue)).isOne();
		assertThat(probe.ready()).hasSize(519);
		assertThat(probe.violations()).isEmpty();
	}

	// purge

	@Test
	void purgeDeletesEveryDeadLetterWithItsKeys() {
		String queue = "dl-purge";
		PartitionProbe probe = probe(this.fixture, queue);
		List<TaskId> ids = deadLetters(this.fixture, queue, 3);
		TaskId live = this.fixture.scheduler.enqueue(queue, new Secret("live"));
		assertThat(this.fixture.deadLetters.purge(queue)).isEqualTo(3);
		assertThat(this.fixture.deadLetters.count(queue)).isZero();
		ids.forEach((id) -> assertThat(probe.taskKeys(id.value())).isEmpty());
		assertThat(probe.task(live.value())).containsEntry("s", "R");
		assertThat(probe.stat("purged")).isEqualTo(3);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void purgeWorksThroughMoreThanOneBatch() {
		String queue = "dl-purge-many";
		PartitionProbe probe = probe(this.fixture, queue);
		deadLetters(this.fixture, queue, 520);
		assertThat(this.fixture.deadLetters.purge(queue)).isEqualTo(520);
		assertThat(probe.allKeys()).noneMatch((key) -> key.startsWith(probe.keys.base() + "t:")
				|| key.startsWith(probe.keys.base() + "p:") || key.startsWith(probe.keys.base() + "e:"));
		assertThat(probe.violations()).isEmpty();
	}

	// trimming

	@Test
	void deadLetteringTrimsTheOldestBeyondTheMaxCount() {
		StoreFixture small = fixture(3, Duration.ofDays(14));
		String queue = "dl-trim-count";
		PartitionProbe probe = probe(small, queue);
		List<TaskId> ids = deadLetters(small, queue, 5);
		assertThat(small.deadLetters.count(queue)).isEqualTo(3);
		assertThat(small.deadLetters.list(queue, 10)).extracting(DeadLetter::id)
			.containsExactly(ids.get(4), ids.get(3), ids.get(2));
		assertThat(probe.taskKeys(ids.get(0).value())).isEmpty();
		assertThat(probe.taskKeys(ids.get(1).value())).isEmpty();
		assertThat(probe.stat("purged")).isEqualTo(2);
		assertThat(probe.stat("dead")).isEqualTo(5);
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void trimDeletesDeadLettersBeyondTheMaxCount() {
		String queue = "dl-trim-explicit";
		List<TaskId> ids = deadLetters(this.fixture, queue, 6);
		StoreFixture small = fixture(2, Duration.ofDays(14));
		PartitionProbe probe = probe(small, queue);
		assertThat(small.deadLetters.trim(queue)).isEqualTo(4);
		assertThat(small.deadLetters.list(queue, 10)).extracting(DeadLetter::id)
			.containsExactly(ids.get(5), ids.get(4));
		ids.subList(0, 4).forEach((id) -> assertThat(probe.taskKeys(id.value())).isEmpty());
		assertThat(small.deadLetters.trim(queue)).isZero();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void deadLetteringTrimsDeadLettersOverTheMaxAge() {
		StoreFixture young = fixture(100, MAX_AGE);
		String queue = "dl-trim-age";
		PartitionProbe probe = probe(young, queue);
		TaskId old = deadLetters(young, queue, 1).get(0);
		long oldAt = probe.dead().get(old.value());
		probe.awaitAfter(oldAt + MAX_AGE.toMillis());
		TaskId fresh = deadLetters(young, queue, 1).get(0);
		assertThat(probe.dead()).containsOnlyKeys(fresh.value());
		assertThat(probe.taskKeys(old.value())).isEmpty();
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void trimDeletesDeadLettersOverTheMaxAge() {
		StoreFixture young = fixture(100, MAX_AGE);
		String queue = "dl-trim-age-explicit";
		PartitionProbe probe = probe(young, queue);
		List<TaskId> ids = deadLetters(young, queue, 2);
		assertThat(probe.dead()).as("both dead letters younger than the max age").hasSize(2);
		probe.awaitAfter(
				probe.dead().values().stream().mapToLong(Long::longValue).max().getAsLong() + MAX_AGE.toMillis());
		assertThat(young.deadLetters.trim(queue)).isEqualTo(2);
		assertThat(probe.dead()).isEmpty();
		ids.forEach((id) -> assertThat(probe.taskKeys(id.value())).isEmpty());
		assertThat(probe.violations()).isEmpty();
	}

	// stack traces

	@Test
	void deadLetterKeepsABoundedStackTraceOfItsCauseChainWithoutTheirMessages() {
		String queue = "dl-trace";
		PartitionProbe probe = probe(this.fixture, queue);
		TaskId id = this.fixture.scheduler.enqueue(queue, new Secret(SECRET));
		Throwable failure = failureWithDeepCauses(6, 50);
		ClaimedTask first = this.fixture.store.claim(queue, 1, "n1").tasks().get(0);
		assertThat(this.fixture.store
			.fail(queue, first.lease(), TaskFailure.of(Duration.ZERO, FailureReason.RETRIES_EXHAUSTED, failure))
			.kind()).isEqualTo(FailOutcome.Kind.RETRY_READY);
		// A retrying task keeps no trace, so a retry storm stays small.
		assertThat(probe.error(id.value())).isEqualTo("failed\n" + IllegalStateException.class.getName()
				+ "\ntop failure\nwith a second line\n\nand a blank one");
		ClaimedTask second = this.fixture.store.claim(queue, 1, "n2").tasks().get(0);
		assertThat(this.fixture.store
			.fail(queue, second.lease(), TaskFailure.of(null, FailureReason.NON_RETRYABLE, failure))
			.kind()).isEqualTo(FailOutcome.Kind.DEAD);

		DeadLetter letter = this.fixture.deadLetters.list(queue, 1).get(0);
		assertThat(letter.reason()).isEqualTo("non-retryable");
		assertThat(letter.exceptionType()).isEqualTo(IllegalStateException.class.getName());
		assertThat(letter.message()).isEqualTo("top failure\nwith a second line\n\nand a blank one");
		String trace = letter.stackTrace();
		assertThat(trace).startsWith(IllegalStateException.class.getName() + "\n\tat ")
			.contains(DeadLettersIntegrationTests.class.getName() + ".failureWithDeepCauses(")
			.contains("Caused by: java.io.IOException\n\tat com.example.Layer1.call1(Layer1.java:1)")
			.contains("\t... 30 more")
			.endsWith(BoundedStackTrace.TRUNCATED)
			.doesNotContain(SECRET)
			.doesNotContain("\n\n");
		assertThat(trace.length()).isLessThanOrEqualTo(TaskFailure.MAX_STACK_TRACE_LENGTH);
		assertThat(framesPerThrowable(trace)).hasSizeGreaterThan(2)
			.allSatisfy((frames) -> assertThat(frames).isLessThanOrEqualTo(20));
		assertThat(this.fixture.scheduler.find(queue, id)).hasValueSatisfying((info) -> assertThat(info.lastError())
			.isEqualTo(new TaskError("non-retryable", IllegalStateException.class.getName(), letter.message())));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void errorRecordsStoredBeforeStackTracesWereKeptStillRead() {
		String queue = "dl-old-record";
		PartitionProbe probe = probe(this.fixture, queue);
		TaskId id = deadLetters(this.fixture, queue, 1).get(0);
		// The layout every earlier version wrote: reason, type, and a message that may
		// hold anything, even blank lines and a record separator.
		String message = "disk full\n\n\u001E\tat not.a.Frame(Frame.java:1)";
		this.fixture.redis.opsForValue()
			.set(probe.keys.error(id.value()), "retries-exhausted\njava.io.IOException\n" + message);
		assertThat(this.fixture.deadLetters.list(queue, 1)).singleElement().satisfies((letter) -> {
			assertThat(letter.reason()).isEqualTo("retries-exhausted");
			assertThat(letter.exceptionType()).isEqualTo("java.io.IOException");
			assertThat(letter.message()).isEqualTo(message);
			assertThat(letter.stackTrace()).isEmpty();
		});
		assertThat(this.fixture.scheduler.find(queue, id)).hasValueSatisfying((info) -> assertThat(info.lastError())
			.isEqualTo(new TaskError("retries-exhausted", "java.io.IOException", message)));
	}

	/**
	 * A failure whose top exception has its real stack (through this method) and whose
	 * causes each have {@code frames} frames of their own, with secrets in their
	 * messages.
	 */
	private static Throwable failureWithDeepCauses(int causes, int frames) {
		Throwable cause = null;
		for (int i = causes; i >= 1; i--) {
			IOException io = new IOException(SECRET + " in cause " + i, cause);
			StackTraceElement[] stack = new StackTraceElement[frames];
			for (int f = 0; f < frames; f++) {
				stack[f] = new StackTraceElement("com.example.Layer" + i, "call" + (f + 1), "Layer" + i + ".java",
						f + 1);
			}
			io.setStackTrace(stack);
			cause = io;
		}
		return new IllegalStateException("top failure\nwith a second line\n\nand a blank one", cause);
	}

	/** How many {@code at} lines each throwable of a trace shows. */
	private static List<Integer> framesPerThrowable(String trace) {
		List<Integer> counts = new ArrayList<>();
		for (String line : trace.split("\n")) {
			if (line.startsWith("\tat ")) {
				counts.set(counts.size() - 1, counts.get(counts.size() - 1) + 1);
			}
			else if (!line.startsWith("\t")) {
				counts.add(0);
			}
		}
		return counts;
	}

	// helpers

	private StoreFixture fixture(int maxCount, Duration maxAge) {
		StoreFixture fixture = new StoreFixture(this.testRedis,
				new StoreSettings(this.testRedis.keyPrefix(), StoreFixture.LEASE, StoreFixture.GRACE, 10, 500, 100, 16,
						1024 * 1024, maxAge, maxCount, 100, Duration.ofDays(1)));
		this.extraFixtures.add(fixture);
		return fixture;
	}

	/** Dead-letter {@code count} new tasks, oldest first, each at a later Redis ms. */
	private List<TaskId> deadLetters(StoreFixture fixture, String queue, int count) {
		List<TaskRequest> requests = IntStream.range(0, count)
			.mapToObj((i) -> TaskRequest.of(queue, new Secret(SECRET + "-" + i)))
			.toList();
		List<TaskId> ids = fixture.scheduler.scheduleAll(requests).stream().map((result) -> result.id()).toList();
		List<ClaimedTask> tasks = new ArrayList<>();
		while (tasks.size() < count) {
			tasks.addAll(fixture.store.claim(queue, 256, "n1").tasks());
		}
		assertThat(tasks).extracting(ClaimedTask::id).containsExactlyElementsOf(ids);
		PartitionProbe probe = probe(fixture, queue);
		long last = -1;
		for (ClaimedTask task : tasks) {
			if (count <= 10) {
				probe.awaitAfter(last);
			}
			FailOutcome outcome = fixture.store.fail(queue, task.lease(),
					new TaskFailure(null, FailureReason.NON_RETRYABLE, "java.lang.IllegalStateException", "fatal"));
			assertThat(outcome.kind()).isEqualTo(FailOutcome.Kind.DEAD);
			last = outcome.now();
		}
		return ids;
	}

	private FailOutcome fail(StoreFixture fixture, String queue, Duration retryDelay, String type, String message) {
		ClaimedTask task = fixture.store.claim(queue, 1, "n1").tasks().get(0);
		return fixture.store.fail(queue, task.lease(),
				new TaskFailure(retryDelay, FailureReason.NON_RETRYABLE, type, message));
	}

	private static PartitionProbe probe(StoreFixture fixture, String queue) {
		return new PartitionProbe(fixture, queue);
	}

	record Secret(String card) {
	}

}

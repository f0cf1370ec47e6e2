package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.internal.store.TaskStore.FailOutcome;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Task expiry, evaluated in Redis time by the claim: a task past its expiry is never
 * leased, whether it waited in {@code ready} or came back for a retry; it ends as a dead
 * letter with reason {@code expired}, or is deleted, and the claim reports it.
 */
@WithRedis
class ExpiryIntegrationTests {

	private TestRedis testRedis;

	private StoreFixture fixture;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.testRedis = redis;
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void aReadyTaskPastItsExpiryIsNeverLeasedAndBecomesAnExpiredDeadLetter() throws InterruptedException {
		String queue = "exp-ready";
		Instant expiresAt = Instant.now().plusMillis(300);
		TaskId id = this.fixture.scheduler.schedule(TaskRequest.of(queue, "late").expiresAt(expiresAt));
		assertThat(this.fixture.scheduler.find(queue, id)).hasValueSatisfying((info) -> {
			assertThat(info.state()).isEqualTo(TaskState.READY);
			assertThat(info.expiresAt()).isEqualTo(expiresAt.truncatedTo(ChronoUnit.MILLIS));
		});
		Thread.sleep(400);

		ClaimBatch batch = this.fixture.store.claim(queue, 4, "n1");

		assertThat(batch.tasks()).isEmpty();
		assertThat(batch.expired()).singleElement().satisfies((expired) -> {
			assertThat(expired.id()).isEqualTo(id);
			assertThat(expired.attempts()).isZero();
			assertThat(expired.expiresAt()).isEqualTo(expiresAt.truncatedTo(ChronoUnit.MILLIS));
		});
		assertThat(this.fixture.deadLetters.list(queue, 10)).singleElement().satisfies((letter) -> {
			assertThat(letter.id()).isEqualTo(id);
			assertThat(letter.reason()).isEqualTo(FailureReason.EXPIRED.value());
			assertThat(letter.message()).contains("not started before it expired");
		});
		assertThat(this.fixture.scheduler.find(queue, id).map(TaskInfo::state)).contains(TaskState.DEAD);
		assertThat(this.fixture.redis.<String, String>opsForHash()
			.get(this.fixture.settings.keys(queue).stats(), "expired")).isEqualTo("1");
		assertThat(this.fixture.store.claim(queue, 4, "n2").expired()).isEmpty();
	}

	@Test
	void aTaskClaimedBeforeItsExpiryRunsAndItsExpiryCountsFromWhenItWasStored() {
		String queue = "exp-in-time";
		TaskId id = this.fixture.scheduler.schedule(TaskRequest.of(queue, "soon").expireAfter(Duration.ofMinutes(1)));
		TaskInfo info = this.fixture.scheduler.find(queue, id).orElseThrow();
		assertThat(info.expiresAt()).isEqualTo(info.createdAt().plus(Duration.ofMinutes(1)));

		ClaimBatch batch = this.fixture.store.claim(queue, 4, "n1");

		assertThat(batch.tasks()).extracting(ClaimedTask::id).containsExactly(id);
		assertThat(batch.expired()).isEmpty();
	}

	@Test
	void aRetryDueAfterTheExpiryIsNotRun() {
		String queue = "exp-retry";
		TaskId id = this.fixture.scheduler
			.schedule(TaskRequest.of(queue, "flaky").expireAfter(Duration.ofMillis(500)).maxAttempts(3));
		ClaimedTask first = this.fixture.store.claim(queue, 1, "n1").tasks().get(0);
		this.fixture.store.fail(queue, first.lease(), new TaskFailure(Duration.ofMillis(700),
				FailureReason.NON_RETRYABLE, "java.lang.IllegalStateException", "boom"));
		// The timer's promotion: claim promotes due tasks itself.
		ClaimBatch batch = await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> this.fixture.store.claim(queue, 1, "n2"), (claim) -> !claim.expired().isEmpty());

		assertThat(batch.tasks()).isEmpty();
		assertThat(batch.expired()).singleElement().satisfies((expired) -> {
			assertThat(expired.id()).isEqualTo(id);
			assertThat(expired.attempts()).isEqualTo(1);
		});
		assertThat(this.fixture.deadLetters.list(queue, 10)).extracting(DeadLetter::reason)
			.containsExactly(FailureReason.EXPIRED.value());
	}

	@Test
	void withKeepExpiredOffAnExpiredTaskIsDeletedAndItsUniqueKeyFreed() throws InterruptedException {
		String queue = "exp-drop";
		StoreSettings defaults = this.fixture.settings;
		try (StoreFixture dropping = new StoreFixture(this.testRedis,
				StoreSettings.of(defaults.keyPrefix(), defaults.leaseDuration(), defaults.reapGrace(),
						defaults.maxDeliveries(), defaults.deadLetterMaxAge(), defaults.deadLetterMaxCount(), false))) {
			TaskRequest request = TaskRequest.of(queue, "once")
				.uniqueKey("report-7")
				.uniqueFor(Duration.ofHours(1))
				.expireAfter(Duration.ofMillis(200));
			ScheduleResult first = dropping.scheduler.submit(request);
			Thread.sleep(300);

			ClaimBatch batch = dropping.store.claim(queue, 4, "n1");

			assertThat(batch.expired()).extracting(ExpiredTask::id).containsExactly(first.id());
			assertThat(dropping.scheduler.find(queue, first.id())).isEmpty();
			assertThat(dropping.deadLetters.count(queue)).isZero();
			ScheduleResult again = dropping.scheduler.submit(request);
			assertThat(again.outcome()).isEqualTo(ScheduleResult.Outcome.CREATED);
			assertThat(again.id()).isNotEqualTo(first.id());
		}
	}

	@Test
	void aRedrivenExpiredTaskRunsBecauseTheExpiryNoLongerHolds() throws InterruptedException {
		String queue = "exp-redrive";
		TaskId id = this.fixture.scheduler.schedule(TaskRequest.of(queue, "x").expireAfter(Duration.ofMillis(200)));
		Thread.sleep(300);
		assertThat(this.fixture.store.claim(queue, 4, "n1").expired()).hasSize(1);

		assertThat(this.fixture.deadLetters.redrive(queue, id)).isTrue();

		assertThat(this.fixture.scheduler.find(queue, id).orElseThrow().expiresAt()).isNull();
		assertThat(this.fixture.store.claim(queue, 4, "n2").tasks()).extracting(ClaimedTask::id).containsExactly(id);
	}

	@Test
	void aTaskDeadLetteredBeforeItsExpiryKeepsTheExpiryWhenRedriven() {
		String queue = "exp-redrive-ahead";
		Instant expiresAt = Instant.now().plus(Duration.ofMinutes(5)).truncatedTo(ChronoUnit.MILLIS);
		TaskId id = this.fixture.scheduler.schedule(TaskRequest.of(queue, "x").expiresAt(expiresAt).maxAttempts(2));
		assertThat(failOnce(queue, id).kind()).isEqualTo(FailOutcome.Kind.RETRY_READY);
		assertThat(failOnce(queue, id).kind()).isEqualTo(FailOutcome.Kind.DEAD);
		assertThat(this.fixture.deadLetters.list(queue, 10)).extracting(DeadLetter::reason)
			.containsExactly(FailureReason.RETRIES_EXHAUSTED.value());

		assertThat(this.fixture.deadLetters.redrive(queue, id)).isTrue();

		assertThat(this.fixture.scheduler.find(queue, id)).hasValueSatisfying((info) -> {
			assertThat(info.state()).isEqualTo(TaskState.READY);
			assertThat(info.failures()).isZero();
			assertThat(info.expiresAt()).isEqualTo(expiresAt);
		});
		// Still ahead: the redriven task runs.
		assertThat(this.fixture.store.claim(queue, 4, "n3").tasks()).extracting(ClaimedTask::id).containsExactly(id);
	}

	@Test
	void anExpiryKeptThroughARedriveStillHolds() throws InterruptedException {
		String queue = "exp-redrive-holds";
		Instant expiresAt = Instant.now().plus(Duration.ofMillis(1500));
		TaskId id = this.fixture.scheduler.schedule(TaskRequest.of(queue, "x").expiresAt(expiresAt).maxAttempts(1));
		assertThat(failOnce(queue, id).kind()).isEqualTo(FailOutcome.Kind.DEAD);
		assertThat(this.fixture.deadLetters.redriveAll(queue)).isOne();
		Thread.sleep(Math.max(0, Duration.between(Instant.now(), expiresAt).toMillis() + 200));

		ClaimBatch batch = this.fixture.store.claim(queue, 4, "n2");

		assertThat(batch.tasks()).isEmpty();
		assertThat(batch.expired()).extracting(ExpiredTask::id).containsExactly(id);
		assertThat(this.fixture.deadLetters.list(queue, 10)).extracting(DeadLetter::reason)
			.containsExactly(FailureReason.EXPIRED.value());
	}

	@Test
	void anExpiryThatCouldNeverLetTheTaskRunIsRefusedBeforeAnythingIsWritten() {
		String queue = "exp-invalid";
		Instant runAt = Instant.now().plus(Duration.ofHours(1));
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.fixture.scheduler
				.schedule(TaskRequest.of(queue, "x").at(runAt).expiresAt(runAt.minusSeconds(1))))
			.withMessageContaining("Expiry " + runAt.minusSeconds(1))
			.withMessageContaining("'" + queue + "'")
			.withMessageContaining("could never run");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.fixture.scheduler
				.schedule(TaskRequest.of(queue, "x").delay(Duration.ofMinutes(10)).expireAfter(Duration.ofMinutes(5))))
			.withMessageContaining("expireAfter PT5M")
			.withMessageContaining("could never run");
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(
				() -> this.fixture.scheduler.schedule(TaskRequest.of(queue, "x").expireAfter(Duration.ofSeconds(-1))))
			.withMessageContaining("expireAfter PT-1S");
		assertThat(this.fixture.queues.contains(queue)).isFalse();
		// The later of the two is what counts: an expiry after the due time is accepted.
		assertThat(this.fixture.scheduler
			.schedule(TaskRequest.of(queue, "x").delay(Duration.ofMinutes(5)).expireAfter(Duration.ofMinutes(10))))
			.isNotNull();
	}

	private FailOutcome failOnce(String queue, TaskId id) {
		ClaimedTask task = this.fixture.store.claim(queue, 1, "n1").tasks().get(0);
		assertThat(task.id()).isEqualTo(id);
		return this.fixture.store.fail(queue, task.lease(), new TaskFailure(Duration.ZERO,
				FailureReason.RETRIES_EXHAUSTED, "java.lang.IllegalStateException", "boom"));
	}

}

package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.List;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@WithRedis
class QueueStatsIntegrationTests {

	private StoreFixture fixture;

	private RedisQueueStats stats;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis);
		this.stats = new RedisQueueStats(this.fixture.scripts, this.fixture.settings);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void countsEveryStateWithoutCountingSkippedHints() {
		String queue = "stats-states";
		this.fixture.scheduler.schedule(queue, "later-1", Duration.ofHours(1));
		this.fixture.scheduler.schedule(queue, "later-2", Duration.ofHours(2));
		this.fixture.scheduler.enqueue(queue, "claimed");
		this.fixture.scheduler.enqueue(queue, "failing");
		TaskId cancelled = this.fixture.scheduler.enqueue(queue, "cancelled");
		this.fixture.scheduler.enqueue(queue, "waiting");
		ClaimBatch batch = this.fixture.store.claim(queue, 2, "n");
		this.fixture.store.fail(queue, batch.tasks().get(1).lease(),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, "java.lang.IllegalStateException", "boom"));
		assertThat(this.fixture.scheduler.cancel(queue, cancelled)).isTrue();

		QueueStats snapshot = this.stats.read(queue);

		assertThat(snapshot.scheduled()).isEqualTo(2);
		assertThat(snapshot.ready()).isEqualTo(1);
		assertThat(snapshot.active()).isEqualTo(1);
		assertThat(snapshot.dead()).isEqualTo(1);
		assertThat(snapshot.nextDueMs()).isBetween(snapshot.now() + Duration.ofMinutes(59).toMillis(),
				snapshot.now() + Duration.ofMinutes(61).toMillis());
		assertThat(snapshot.oldestReadyDueMs()).isPositive().isLessThanOrEqualTo(snapshot.now());
		assertThat(snapshot.counter("enq")).isEqualTo(6);
		assertThat(snapshot.counter("dead")).isEqualTo(1);
		assertThat(snapshot.counter("canceled")).isEqualTo(1);
		assertThat(snapshot.paused()).isFalse();
		assertThat(snapshot.layoutVersion()).isEqualTo(LayoutVersion.CURRENT);
	}

	@Test
	void reportsTheTimerOwnerAndThePausedFlag() {
		String queue = "stats-timer";
		this.fixture.scheduler.schedule(TaskRequest.of(queue, "x").delay(Duration.ofMinutes(1)));
		this.fixture.store.promote(queue, "instance-a", Duration.ofSeconds(3));
		this.fixture.control.pause(queue);

		QueueStats snapshot = this.stats.read(queue);

		assertThat(snapshot.timerOwner()).isEqualTo("instance-a");
		assertThat(snapshot.timerTtlMs()).isBetween(1L, 3000L);
		assertThat(snapshot.paused()).isTrue();
		assertThat(snapshot.ready()).isZero();
		assertThat(snapshot.oldestReadyAge()).isZero();
		assertThat(this.fixture.store.claim(queue, 1, "n").paused()).isTrue();
		assertThat(List.of(snapshot.scheduled())).containsExactly(1L);
	}

	@Test
	void anUnknownQueueIsEmpty() {
		QueueStats snapshot = this.stats.read("stats-never-used");
		assertThat(snapshot.scheduled() + snapshot.ready() + snapshot.active() + snapshot.dead()).isZero();
		assertThat(snapshot.timerOwner()).isNull();
		assertThat(snapshot.layoutVersion()).isNull();
		assertThat(snapshot.counters()).isEmpty();
	}

}

package dev.delayedtasks.internal.store;

import java.util.List;
import java.util.Map;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.store.TaskStore.AckOutcome;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A claim whose reply never reached its dispatcher (a timeout while Redis was stalled)
 * still leased tasks on the server. {@code recover} gives exactly those tasks back
 * without counting a delivery, and leaves every other lease alone.
 */
@WithRedis
class LostClaimRecoveryIntegrationTests {

	private static final String QUEUE = "lost-claim";

	private StoreFixture fixture;

	private PartitionProbe probe;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis);
		this.probe = new PartitionProbe(this.fixture, QUEUE);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void recoverGivesBackOnlyTheTasksOfTheLostClaims() {
		TaskId a = this.fixture.scheduler.enqueue(QUEUE, new Job("a"));
		TaskId b = this.fixture.scheduler.enqueue(QUEUE, new Job("b"));
		TaskId c = this.fixture.scheduler.enqueue(QUEUE, new Job("c"));
		TaskId d = this.fixture.scheduler.enqueue(QUEUE, new Job("d"));
		TaskId e = this.fixture.scheduler.enqueue(QUEUE, new Job("e"));
		List<ClaimedTask> lost = this.fixture.store.claim(QUEUE, 2, "w1.1").tasks();
		ClaimedTask held = this.fixture.store.claim(QUEUE, 1, "w1.2").tasks().get(0);
		ClaimedTask otherWorker = this.fixture.store.claim(QUEUE, 1, "w2.1").tasks().get(0);
		ClaimedTask alsoLost = this.fixture.store.claim(QUEUE, 1, "w1.3").tasks().get(0);
		assertThat(lost).extracting(ClaimedTask::id).containsExactly(a, b);
		assertThat(List.of(held.id(), otherWorker.id(), alsoLost.id())).containsExactly(c, d, e);
		assertThat(this.fixture.scheduler.cancel(QUEUE, b)).as("running: asked to stop, not gone yet").isFalse();
		assertThat(this.probe.task(b.value())).containsEntry("cr", "1");

		assertThat(this.fixture.store.recover(QUEUE, List.of("w1.1", "w1.3"))).isEqualTo(2);

		assertThat(this.probe.lease()).containsOnlyKeys(c.value(), d.value());
		assertThat(this.probe.ready()).containsExactlyInAnyOrder(a.value(), e.value());
		assertThat(this.probe.task(a.value())).containsEntry("s", "R").containsEntry("v", "0").doesNotContainKey("k");
		assertThat(this.probe.taskKeys(b.value())).as("cancelled while leased: deleted, not run again").isEmpty();
		assertThat(this.probe.task(c.value())).containsEntry("s", "A").containsEntry("k", held.token());
		assertThat(this.probe.stat("recovered")).isEqualTo(2);
		assertThat(this.probe.violations()).isEmpty();

		assertThat(this.fixture.store.ack(QUEUE, List.of(lost.get(0).lease()))).as("the lost claim's token is dead")
			.containsExactly(AckOutcome.STALE);
		List<ClaimedTask> again = this.fixture.store.claim(QUEUE, 2, "w1.4").tasks();
		assertThat(again).extracting(ClaimedTask::id).containsExactlyInAnyOrder(a, e);
		assertThat(again).extracting(ClaimedTask::deliveries).as("the lost delivery is not counted").containsOnly(1);
		assertThat(this.fixture.store.ack(QUEUE, List.of(held.lease(), otherWorker.lease())))
			.containsExactly(AckOutcome.DONE, AckOutcome.DONE);
		assertThat(this.probe.violations()).isEmpty();
	}

	@Test
	void recoverOfAClaimThatLeasedNothingChangesNothing() {
		this.fixture.scheduler.enqueue(QUEUE, new Job("x"));
		ClaimedTask task = this.fixture.store.claim(QUEUE, 1, "w1.1").tasks().get(0);
		Map<String, String> before = this.probe.snapshot();
		assertThat(this.fixture.store.recover(QUEUE, List.of("w1.2", "w1", "w1.1:1"))).isZero();
		assertThat(this.probe.snapshot()).isEqualTo(before);
		assertThat(this.fixture.store.ack(QUEUE, List.of(task.lease()))).containsExactly(AckOutcome.DONE);
	}

	record Job(String name) {
	}

}

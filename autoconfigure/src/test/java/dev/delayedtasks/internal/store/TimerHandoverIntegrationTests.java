package dev.delayedtasks.internal.store;

import java.time.Duration;

import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The timer's hand-over signals in {@code promote.lua}: a resigning owner wakes a
 * contender through the handover list, and a tick popped by an instance that no longer
 * owns the timer goes back to the owner.
 */
@WithRedis
class TimerHandoverIntegrationTests {

	private static final Duration TTL = Duration.ofSeconds(3);

	private StoreFixture fixture;

	private String queue;

	private PartitionKeys keys;

	@BeforeEach
	void setUp(TestRedis redis, TestInfo test) {
		this.fixture = new StoreFixture(redis);
		// A queue per test: a timer lease outlives the test that took it.
		this.queue = "handover-" + test.getTestMethod().orElseThrow().getName().hashCode();
		this.keys = this.fixture.settings.keys(this.queue);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void resignOfTheOwnerLeavesOneHandoverTokenAndFreesTheTimer() {
		assertThat(this.fixture.store.promote(this.queue, "a", TTL).owner()).isTrue();
		this.fixture.store.resignTimer(this.queue, "a");
		this.fixture.store.resignTimer(this.queue, "a");
		assertThat(this.fixture.redis.hasKey(this.keys.timer())).isFalse();
		assertThat(this.fixture.redis.opsForList().size(this.keys.handover())).isOne();
		assertThat(this.fixture.store.promote(this.queue, "b", TTL).owner()).isTrue();
	}

	@Test
	void resignOfANonOwnerWakesNobody() {
		assertThat(this.fixture.store.promote(this.queue, "a", TTL).owner()).isTrue();
		this.fixture.store.resignTimer(this.queue, "b");
		assertThat(this.fixture.redis.opsForValue().get(this.keys.timer())).isEqualTo("a");
		assertThat(this.fixture.redis.opsForList().size(this.keys.handover())).isZero();
	}

	@Test
	void tickPoppedByAnInstanceThatDoesNotOwnTheTimerGoesBackToTheOwner() {
		assertThat(this.fixture.store.promote(this.queue, "a", TTL).owner()).isTrue();
		// "b" believed it owned the timer and popped the owner's tick.
		assertThat(this.fixture.store.promote(this.queue, "b", TTL, true).owner()).isFalse();
		assertThat(this.fixture.redis.opsForList().size(this.keys.tick())).isOne();
		// Never more than one token, however many stale callers hand one back.
		this.fixture.store.promote(this.queue, "c", TTL, true);
		assertThat(this.fixture.redis.opsForList().size(this.keys.tick())).isOne();
	}

	@Test
	void tickPoppedByTheOwnerIsNotPushedBack() {
		assertThat(this.fixture.store.promote(this.queue, "a", TTL).owner()).isTrue();
		assertThat(this.fixture.store.promote(this.queue, "a", TTL, true).owner()).isTrue();
		assertThat(this.fixture.redis.opsForList().size(this.keys.tick())).isZero();
	}

}

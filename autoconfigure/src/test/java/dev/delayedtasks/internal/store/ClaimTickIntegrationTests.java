package dev.delayedtasks.internal.store;

import java.time.Duration;

import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The first lease of an empty lease set is a new earliest deadline. A claim tells the
 * timer owner of it with a {@code tick} only when the owner, which promotes at least
 * every third of the timer lease anyway, would otherwise reap that lease late; a longer
 * lease needs no tick, so a trickle of tasks does not cost a {@code promote} call each.
 */
@WithRedis
class ClaimTickIntegrationTests {

	private static final Duration TIMER_TTL = Duration.ofSeconds(3);

	@Test
	void aLeaseThatEndsAfterTheOwnersNextPromotionPushesNoTick(TestRedis redis) {
		assertThat(ticksAfterClaimingIntoAnEmptyLeaseSet(redis, Duration.ofSeconds(30), Duration.ofSeconds(5)))
			.isZero();
		assertThat(ticksAfterClaimingIntoAnEmptyLeaseSet(redis, Duration.ofMillis(900), Duration.ofMillis(100)))
			.as("lease + grace = the re-arm interval: the owner's next promotion is in time")
			.isZero();
	}

	@Test
	void aLeaseThatWouldBeReapedBeforeTheOwnersNextPromotionPushesOneTick(TestRedis redis) {
		assertThat(ticksAfterClaimingIntoAnEmptyLeaseSet(redis, Duration.ofMillis(300), Duration.ofMillis(100)))
			.isOne();
	}

	private long ticksAfterClaimingIntoAnEmptyLeaseSet(TestRedis redis, Duration lease, Duration grace) {
		StoreSettings settings = StoreSettings.of(redis.keyPrefix(), lease, grace, 10, Duration.ofDays(14), 100_000,
				true, TIMER_TTL);
		try (StoreFixture fixture = new StoreFixture(redis, settings)) {
			String queue = "claim-tick-" + lease.toMillis();
			PartitionKeys keys = fixture.keys(queue);
			fixture.scheduler.enqueue(queue, new Job("first"));
			fixture.scheduler.enqueue(queue, new Job("second"));
			fixture.redis.delete(keys.tick());
			assertThat(fixture.store.claim(queue, 1, "w1").tasks()).hasSize(1);
			assertThat(fixture.store.claim(queue, 1, "w1").tasks()).as("a second lease is not the earliest").hasSize(1);
			Long ticks = fixture.redis.opsForList().size(keys.tick());
			return (ticks != null) ? ticks : 0;
		}
	}

	record Job(String name) {
	}

}

package dev.delayedtasks.internal.recurring;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Instances whose clocks are minutes off Redis's, beside one whose clock is right:
 * Redis's time decides every tick, so no tick is missed, skipped or created twice, and a
 * reset restarts the sequence at Redis's now, whichever instance makes the call.
 */
@WithRedis
class RecurringClockSkewIntegrationTests {

	private static final String QUEUE = "skewed";

	private static final Duration SKEW = Duration.ofMinutes(5);

	private RecurringFixture right;

	private RecurringFixture ahead;

	private RecurringFixture behind;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.right = new RecurringFixture(redis);
		this.ahead = new RecurringFixture(redis, Clock.offset(Clock.systemUTC(), SKEW));
		this.behind = new RecurringFixture(redis, Clock.offset(Clock.systemUTC(), SKEW.negated()));
	}

	@AfterEach
	void tearDown() {
		this.right.close();
		this.ahead.close();
		this.behind.close();
	}

	@Test
	void anInstanceAheadOfRedisCreatesTheNextTicksOfRedisTimeAndCountsNoneMissed() {
		long before = redisMillis();
		this.ahead.recurring.upsert(RecurringSchedule.fixedRate("ahead", QUEUE, Duration.ofSeconds(1))
			.misfireThreshold(Duration.ofSeconds(2)));
		TreeMap<Long, String> occurrences = this.right.occurrences(QUEUE, "ahead");
		assertThat(occurrences).hasSize(RedisRecurringTasks.LOOKAHEAD);
		assertThat(occurrences.firstKey()).as("the first tick after Redis's now, not the instance's")
			.isBetween(before, redisMillis() + 1000);
		assertThat(this.ahead.missed("ahead")).isZero();
	}

	@Test
	void ticksRunOnceEachAndNoneIsMissedWhileSkewedInstancesRunThem() {
		this.right.recurring.upsert(RecurringSchedule.fixedRate("shared", QUEUE, Duration.ofSeconds(1))
			.misfireThreshold(Duration.ofSeconds(2)));
		List<RecurringFixture> instances = List.of(this.ahead, this.behind, this.right);
		long first = this.right.occurrences(QUEUE, "shared").firstKey();
		// Each tick is started as a worker would at its due time, in turn by the instance
		// ahead, the one behind and the right one.
		for (int i = 0; i < 6; i++) {
			long tick = first + i * 1000L;
			await().atMost(Duration.ofSeconds(5)).until(() -> redisMillis() >= tick);
			RecurringFixture instance = instances.get(i % 3);
			assertThat(instance.recurring.admit(RecurringFixture.occurrence(QUEUE, "shared", tick)))
				.as("tick %d started by instance %d", tick, i % 3)
				.isTrue();
			assertThat(instance.recurring.admit(RecurringFixture.occurrence(QUEUE, "shared", tick)))
				.as("a second start of tick %d", tick)
				.isFalse();
		}
		for (RecurringFixture instance : instances) {
			assertThat(instance.missed("shared")).isZero();
		}
		RecurringScheduleInfo info = this.right.recurring.find("shared").orElseThrow();
		assertThat(info.missedTicks()).isZero();
		assertThat(this.right.occurrences(QUEUE, "shared").keySet())
			.as("the created occurrences follow one another a second apart")
			.allSatisfy((tick) -> assertThat((tick - first) % 1000).isZero());
	}

	@Test
	void aResumeFromASkewedInstanceRestartsTheSequenceAtRedisNow() {
		this.right.recurring.upsert(RecurringSchedule.fixedRate("resumed", QUEUE, Duration.ofSeconds(1)));
		for (RecurringFixture instance : List.of(this.ahead, this.behind)) {
			assertThat(instance.recurring.pause("resumed")).isTrue();
			long before = redisMillis();
			assertThat(instance.recurring.resume("resumed")).isTrue();
			RecurringScheduleInfo info = instance.recurring.find("resumed").orElseThrow();
			assertThat(info.nextTick()).isNotNull();
			assertThat(info.nextTick().toEpochMilli()).as("the next tick of Redis's time")
				.isBetween(before, redisMillis() + 1000);
			Map<Object, Object> stored = this.right.schedule(QUEUE, "resumed");
			assertThat(stored.get("w").toString()).as("occurrences created after the resume").isNotEmpty();
		}
		assertThat(this.ahead.missed("resumed") + this.behind.missed("resumed")).isZero();
	}

	@Test
	void aCronScheduleShowsItsNextTickByRedisTimeOnASkewedInstance() {
		this.ahead.recurring.upsert(RecurringSchedule.cron("minutely", QUEUE, "0 * * * * *"));
		long now = redisMillis();
		assertThat(this.ahead.recurring.find("minutely").orElseThrow().nextTick().toEpochMilli()).isBetween(now - 1000,
				now + 60_000);
		assertThat(this.behind.recurring.find("minutely").orElseThrow().nextTick().toEpochMilli()).isBetween(now - 1000,
				now + 60_000);
	}

	private long redisMillis() {
		Long time = this.right.redis.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time());
		return (time != null) ? time : -1;
	}

}

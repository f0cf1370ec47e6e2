package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.internal.store.RedisQueueHistory.Period;
import dev.delayedtasks.internal.store.script.EvalScriptCall;
import dev.delayedtasks.internal.store.script.ScriptClock;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.internal.worker.LatenessRecorder;
import dev.delayedtasks.internal.worker.QueueHistoryRecorder;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link RedisQueueHistory} on a real Redis, its minutes moved with the test clock
 * include: one sample per minute whoever records it, none while the counters do not move,
 * a burst after a quiet spell counted in the minute it happened, per-minute counts read
 * back as differences, and the samples bounded to a day of minutes and a month of hours.
 */
@WithRedis
class RedisQueueHistoryIntegrationTests {

	private StoreFixture fixture;

	private RedisQueueHistory history;

	private PartitionKeys keys;

	private long offsetMs;

	private String queue;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis);
		StoreScripts onTestClock = new StoreScripts(this.fixture.redis,
				new EvalScriptCall(this.fixture.redis, ScriptClock.TEST));
		this.history = new RedisQueueHistory(onTestClock, this.fixture.settings);
	}

	/**
	 * A queue per test (the class's tests share one key prefix), its clock 5 s into a
	 * minute.
	 */
	private void use(String queue) {
		this.queue = queue;
		this.keys = this.fixture.keys(queue);
		// So that the test's own seconds never cross into the next minute.
		advance(Duration.ofMillis(65_000 - Instant.now().toEpochMilli() % 60_000));
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void oneSamplePerMinuteNoneWhileIdleAndABurstCountedInItsMinute() {
		use("history-burst");
		run(3, 1);
		assertThat(this.history.record(this.queue)).isTrue();
		assertThat(this.history.record(this.queue)).as("the same minute, by another instance").isFalse();
		advance(Duration.ofMinutes(1));
		assertThat(this.history.record(this.queue)).as("nothing moved").isFalse();
		advance(Duration.ofMinutes(5));
		run(4, 2);
		assertThat(this.history.record(this.queue)).isTrue();
		List<Period> minutes = this.history.perMinute(this.queue, Duration.ofMinutes(10), now());
		// The sample before the burst is written for the minute before it: the burst is
		// not spread over the
		// quiet minutes.
		assertThat(minutes).hasSize(2);
		assertThat(minutes.get(0).created()).isZero();
		assertThat(minutes.get(0).succeeded()).isZero();
		Period burst = minutes.get(1);
		assertThat(burst.created()).isEqualTo(4);
		assertThat(burst.succeeded()).isEqualTo(2);
		assertThat(burst.failed()).as("one retried, one dead-lettered").isEqualTo(2);
		assertThat(burst.deadLettered()).isEqualTo(1);
		assertThat(this.fixture.redis.opsForZSet().zCard(this.keys.minutes())).isEqualTo(3);
	}

	@Test
	void samplesAreBoundedToADayOfMinutesAndAMonthOfHoursAndExpireWhenIdle() {
		use("history-bounds");
		for (int minute = 0; minute < 30; minute++) {
			run(1, 1);
			this.history.record(this.queue);
			advance(Duration.ofMinutes(1));
		}
		assertThat(this.fixture.redis.opsForZSet().range(this.keys.minutes(), 0, -1)).hasSize(30);
		advance(Duration.ofHours(23).plusMinutes(45));
		run(1, 1);
		this.history.record(this.queue);
		// A day of minutes back from now: the first quarter of an hour has gone.
		assertThat(this.fixture.redis.opsForZSet().zCard(this.keys.minutes())).isBetween(15L, 17L);
		assertThat(this.fixture.redis.getExpire(this.keys.minutes())).isBetween(24 * 3600L - 60, 24 * 3600L + 60);
		assertThat(this.fixture.redis.getExpire(this.keys.hours())).isGreaterThan(31 * 24 * 3600L - 60);
		assertThat(this.history.perHour(this.queue, Duration.ofDays(2), now()))
			.allSatisfy((hour) -> assertThat(hour.created()).isGreaterThanOrEqualTo(0));
	}

	@Test
	void countersThatWentDownStartTheSeriesAgainRatherThanCountNegative() {
		use("history-reset");
		run(5, 5);
		assertThat(this.history.record(this.queue)).isTrue();
		advance(Duration.ofMinutes(1));
		// The counters lost on their own (a key evicted or deleted), the queue going on.
		this.fixture.redis.delete(this.keys.stats());
		run(1, 1);
		assertThat(this.history.record(this.queue)).isTrue();
		advance(Duration.ofMinutes(1));
		run(2, 2);
		assertThat(this.history.record(this.queue)).isTrue();
		List<Period> minutes = this.history.perMinute(this.queue, Duration.ofMinutes(10), now());
		assertThat(minutes).allSatisfy((minute) -> assertThat(minute.created()).isNotNegative());
		assertThat(minutes).last().satisfies((minute) -> assertThat(minute.created()).isEqualTo(2));
	}

	@Test
	void latenessIsReadPerMinuteAndOverASpanToItsBucketBoundsWhoeverAddedIt() {
		use("history-lateness");
		run(1, 1);
		assertThat(this.history.record(this.queue)).isTrue();
		advance(Duration.ofMinutes(1));
		// 98 runs started up to 5 ms late, 2 up to 500 ms.
		assertThat(this.history.record(this.queue, buckets(Map.of(5L, 98L, 500L, 2L)))).isTrue();
		advance(Duration.ofMinutes(1));
		assertThat(this.history.record(this.queue, buckets(Map.of(1L, 10L)))).isTrue();
		// Another instance's counts in a minute already recorded land in the next one.
		assertThat(this.history.record(this.queue, buckets(Map.of(60_001L, 3L)))).isFalse();
		advance(Duration.ofMinutes(1));
		assertThat(this.history.record(this.queue)).isTrue();
		List<Period> minutes = this.history.perMinute(this.queue, Duration.ofMinutes(10), now());
		assertThat(minutes).extracting(Period::latenessP50Millis).containsExactly(5L, 1L, 60_001L);
		assertThat(minutes).extracting(Period::latenessP99Millis).containsExactly(500L, 1L, 60_001L);
		RedisQueueHistory.Lateness lastTwo = this.history.lateness(this.queue, Duration.ofMinutes(2), now());
		assertThat(lastTwo.started()).as("the minutes after the sample two minutes back").isEqualTo(13);
		RedisQueueHistory.Lateness all = this.history.lateness(this.queue, Duration.ofMinutes(10), now());
		assertThat(all.started()).isEqualTo(113);
		assertThat(all.p50Millis()).isEqualTo(5L);
		assertThat(all.p99Millis()).as("rank 112 of 113 is above a minute").isEqualTo(60_001L);
		RedisQueueHistory.Recent recent = this.history.recent(this.queue, Duration.ofMinutes(10), now());
		assertThat(recent.perMinute()).as("one read: the same as perMinute and lateness apart")
			.isEqualTo(this.history.perMinute(this.queue, Duration.ofMinutes(10), now()));
		assertThat(recent.lateness()).isEqualTo(all);
		advance(Duration.ofMinutes(1));
		assertThat(this.history.record(this.queue)).as("nothing moved").isFalse();
		assertThat(this.history.lateness(this.queue, Duration.ofMinutes(1), now()).p50Millis())
			.as("no run started in the span")
			.isNull();
		// Samples written before lateness was kept still read.
		this.fixture.redis.opsForZSet()
			.add(this.fixture.keys("history-old").minutes(), (minute() - 2) + ":1:1:0:0", minute() - 2);
		this.fixture.redis.opsForZSet()
			.add(this.fixture.keys("history-old").minutes(), (minute() - 1) + ":3:2:0:0", minute() - 1);
		assertThat(this.history.perMinute("history-old", Duration.ofMinutes(10), now())).singleElement()
			.satisfies((minute) -> {
				assertThat(minute.created()).isEqualTo(2);
				assertThat(minute.latenessP50Millis()).isNull();
			});
	}

	@Test
	void oneQueueWhoseRecordingFailsLeavesTheOthersRecorded() {
		use("history-good");
		this.fixture.redis.opsForValue().set(this.fixture.keys("history-bad").stats(), "not a hash");
		run(1, 1);
		QueueHistoryRecorder recorder = new QueueHistoryRecorder(this.history,
				() -> Set.of("history-bad", "history-good"), new LatenessRecorder());
		recorder.start();
		try {
			await().atMost(Duration.ofSeconds(5)).until(() -> this.fixture.redis.hasKey(this.keys.minutes()));
		}
		finally {
			recorder.stop();
		}
	}

	/** Counts per lateness bucket, from counts by a lateness in milliseconds. */
	private static long[] buckets(Map<Long, Long> countsByMillis) {
		long[] buckets = new long[LatenessBuckets.COUNT];
		countsByMillis.forEach((millis, count) -> buckets[LatenessBuckets.of(millis)] += count);
		return buckets;
	}

	private long minute() {
		return now().toEpochMilli() / 60_000;
	}

	/**
	 * Create tasks and run them: {@code succeeded} succeed, one more is retried and one
	 * dead-lettered.
	 */
	private void run(int created, int succeeded) {
		for (int i = 0; i < created; i++) {
			this.fixture.scheduler.enqueue(this.queue, "task " + i);
		}
		List<ClaimedTask> claimed = this.fixture.store.claim(this.queue, created, "n1").tasks();
		for (int i = 0; i < claimed.size(); i++) {
			if (i < succeeded) {
				this.fixture.store.ack(this.queue, List.of(claimed.get(i).lease()));
			}
			else if (i == succeeded) {
				this.fixture.store.fail(this.queue, claimed.get(i).lease(),
						new TaskFailure(Duration.ofHours(1), FailureReason.NON_RETRYABLE, "E", "retry"));
			}
			else {
				this.fixture.store.fail(this.queue, claimed.get(i).lease(),
						new TaskFailure(null, FailureReason.NON_RETRYABLE, "E", "dead"));
			}
		}
	}

	private void advance(Duration duration) {
		this.offsetMs += duration.toMillis();
		this.fixture.redis.opsForHash().put(this.keys.meta(), "o", Long.toString(this.offsetMs));
	}

	private Instant now() {
		return Instant.now().plusMillis(this.offsetMs);
	}

}

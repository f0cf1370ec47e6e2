package dev.delayedtasks.internal.recurring;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.MisfirePolicy;
import dev.delayedtasks.OverlapPolicy;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.admin.RedisDeadLetters;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.Lease;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.internal.worker.OccurrenceGate;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Attacks on the promises of recurring schedules at the level of the store and the
 * occurrence gate, on a real Redis. A worker asks the gate
 * ({@link RedisRecurringTasks#admit}) on every delivery of a claimed occurrence's first
 * attempt (TaskRunner#admitted); these tests claim with the real scripts and ask the gate
 * as the worker would.
 */
@WithRedis
class RecurringPromisesIntegrationTests {

	private TestRedis testRedis;

	private RecurringFixture one;

	private RecurringFixture two;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.testRedis = redis;
		this.one = new RecurringFixture(redis);
		this.two = new RecurringFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.one.close();
		this.two.close();
	}

	/**
	 * "The occurrence is handled by the queue's @DelayedTaskHandler like any task:
	 * retries, dead letters, ...". A dead-lettered occurrence that an operator redrives
	 * must run its handler again.
	 */
	@Test
	void aRedrivenDeadLetteredOccurrenceRunsItsHandlerAgain() {
		String queue = "rv-redrive-queue";
		this.one.recurring.upsert(RecurringSchedule.fixedRate("rv-redrive", queue, Duration.ofSeconds(1)));
		RedisTaskStore store = new RedisTaskStore(new StoreScripts(this.one.redis), this.one.settings);
		ClaimedTask claimed = claim(store, queue);
		long tick = tick(claimed, "rv-redrive");
		assertThat(this.one.recurring.admit(context(queue, claimed))).as("first delivery admitted").isTrue();
		// The handler threw a non-retryable exception: dead-lettered.
		store.fail(queue, new Lease(claimed.id(), claimed.token(), null),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, "java.lang.IllegalStateException", "boom", ""));
		assertThat(this.one.occurrences(queue, "rv-redrive")).containsEntry(tick, "D");
		// An operator fixes the cause and redrives it.
		RedisDeadLetters deadLetters = new RedisDeadLetters(new StoreScripts(this.one.redis), this.one.settings);
		assertThat(deadLetters.redrive(queue, claimed.id())).isTrue();
		ClaimedTask again = await().atMost(Duration.ofSeconds(5)).until(() -> {
			ClaimBatch batch = store.claim(queue, 10, "n-" + System.nanoTime());
			return batch.tasks().stream().filter((t) -> t.id().equals(claimed.id())).findFirst().orElse(null);
		}, (task) -> task != null);
		assertThat(again.failures()).as("redrive resets the attempts").isZero();
		assertThat(again.deliveries()).as("redrive resets the deliveries: the worker asks the gate again").isOne();
		assertThat(this.two.recurring.admit(context(queue, again)))
			.as("the redriven occurrence runs its handler (TaskRunner asks the gate on this first delivery)")
			.isTrue();
	}

	/**
	 * "a changed one ... takes effect from its next tick after now ... a tick both
	 * definitions share is kept, not doubled, and runs with the new payload" and "One
	 * occurrence per tick, whatever the number of instances, restarts". A tick that has
	 * come due but whose occurrence has not started yet (the queue's usual lateness, or a
	 * busy queue) when another instance upserts a changed payload must still run, or at
	 * least be counted as missed.
	 */
	@Test
	void aTickDueButNotYetStartedWhenThePayloadChangesIsNeitherLostNorUncounted() {
		String queue = "rv-change-queue";
		this.one.recurring.upsert(
				RecurringSchedule.fixedRate("rv-change", queue, Duration.ofSeconds(2)).payload(Map.of("version", 1)));
		long tick = this.one.occurrences(queue, "rv-change").firstKey();
		// The tick is due; the worker is a few ms late (or the queue busy, within the
		// misfire threshold of 1 minute).
		await().atMost(Duration.ofSeconds(5)).until(() -> redisMillis() > tick + 50);
		// A rolling deploy: an instance of the new version starts and upserts.
		this.two.recurring.upsert(
				RecurringSchedule.fixedRate("rv-change", queue, Duration.ofSeconds(2)).payload(Map.of("version", 2)));
		boolean ran = this.one.recurring.admit(RecurringFixture.occurrence(queue, "rv-change", tick));
		RecurringScheduleInfo info = this.one.recurring.find("rv-change").orElseThrow();
		assertThat(ran || info.missedTicks() > 0)
			.as("tick %d (due %d ms before the upsert, within the 1 min threshold): ran=%s, missedTicks=%d, "
					+ "skipped=%s", tick, 50, ran, info.missedTicks(), this.one.skipped)
			.isTrue();
	}

	/**
	 * "Redis's time decides every tick ... an instance whose clock is minutes ahead of or
	 * behind Redis's creates, runs and counts exactly the ticks a correct one does":
	 * RUN_ALL after a gap, caught up by an instance 5 minutes ahead and by one 5 minutes
	 * behind, versus a correct one.
	 */
	@Test
	void runAllAfterAGapCountsAndRunsTheSameTicksOnSkewedInstances() {
		Map<String, Long> missed = new TreeMap<>();
		Map<String, Integer> runs = new TreeMap<>();
		for (Duration skew : List.of(Duration.ZERO, Duration.ofMinutes(5), Duration.ofMinutes(-5))) {
			String id = "rv-skew-all-" + (skew.isZero() ? "right" : skew.isNegative() ? "behind" : "ahead");
			String queue = id + "-queue";
			this.one.recurring.upsert(RecurringSchedule.fixedRate(id, queue, Duration.ofSeconds(1))
				.misfireThreshold(Duration.ofSeconds(2))
				.misfire(MisfirePolicy.RUN_ALL, 3));
			long late = stopFor(queue, id, Duration.ofSeconds(10));
			try (RecurringFixture skewed = new RecurringFixture(this.testRedis,
					Clock.offset(Clock.systemUTC(), skew))) {
				skewed.recurring.ensure(id);
				long now = redisMillis();
				TreeMap<Long, String> occurrences = this.one.occurrences(queue, id);
				List<Long> lateTicks = occurrences.keySet().stream().filter((t) -> t < now - 2000).toList();
				int admitted = 0;
				for (long t : lateTicks) {
					admitted += skewed.recurring.admit(RecurringFixture.occurrence(queue, id, t)) ? 1 : 0;
				}
				assertThat(skewed.recurring.admit(RecurringFixture.occurrence(queue, id, late))).isFalse();
				missed.put(id, skewed.missed(id));
				runs.put(id, admitted);
			}
		}
		assertThat(runs).as("late ticks run per instance").allSatisfy((id, count) -> assertThat(count).isEqualTo(3));
		assertThat(missed).as("missed ticks per instance (gaps of 10 s, threshold 2 s)")
			.allSatisfy((id, count) -> assertThat(count).isBetween(6L, 9L));
	}

	/**
	 * An instance clock that jumps (NTP step, VM resume) between calls, by minutes either
	 * way: every tick still runs once, none counted missed.
	 */
	@Test
	void aClockThatJumpsBetweenCallsRunsEveryTickOnceAndMissesNone() {
		String queue = "rv-jump-queue";
		MutableClock clock = new MutableClock();
		try (RecurringFixture jumpy = new RecurringFixture(this.testRedis, clock)) {
			this.one.recurring.upsert(RecurringSchedule.fixedRate("rv-jump", queue, Duration.ofSeconds(1))
				.misfireThreshold(Duration.ofSeconds(2))
				.overlap(OverlapPolicy.SKIP));
			long first = this.one.occurrences(queue, "rv-jump").firstKey();
			long[] jumps = { 600_000, -1_200_000, 3_600_000, -3_600_000, 7_000, -7_000, 0 };
			for (int i = 0; i < jumps.length; i++) {
				long tick = first + i * 1000L;
				clock.offset.addAndGet(jumps[i]);
				await().atMost(Duration.ofSeconds(5)).until(() -> redisMillis() >= tick);
				assertThat(jumpy.recurring.admit(RecurringFixture.occurrence(queue, "rv-jump", tick)))
					.as("tick %d after a jump of %d ms", tick, jumps[i])
					.isTrue();
				// the previous occurrence finished
				this.one.redis.delete(this.one.keys(queue).task("rv-jump:" + tick));
			}
			assertThat(jumpy.missed("rv-jump")).isZero();
			assertThat(this.one.recurring.find("rv-jump").orElseThrow().missedTicks()).isZero();
			RecurringScheduleInfo info = jumpy.recurring.find("rv-jump").orElseThrow();
			assertThat(info.nextTick().toEpochMilli()).isBetween(redisMillis() - 2000, redisMillis() + 3000);
		}
	}

	/**
	 * Pause on an instance 5 minutes ahead, resume on one 5 minutes behind, while the
	 * ticks come due: none runs while paused, none is counted missed, and the schedule
	 * restarts at the next tick of Redis's time.
	 */
	@Test
	void pauseAheadResumeBehindRestartsAtRedisNowWithoutMissedTicks() {
		String queue = "rv-pause-queue";
		try (RecurringFixture ahead = new RecurringFixture(this.testRedis,
				Clock.offset(Clock.systemUTC(), Duration.ofMinutes(5)));
				RecurringFixture behind = new RecurringFixture(this.testRedis,
						Clock.offset(Clock.systemUTC(), Duration.ofMinutes(-5)))) {
			this.one.recurring.upsert(RecurringSchedule.fixedRate("rv-pause", queue, Duration.ofSeconds(1))
				.misfireThreshold(Duration.ofSeconds(1))
				.misfire(MisfirePolicy.RUN_ALL, 5));
			List<Long> created = List.copyOf(this.one.occurrences(queue, "rv-pause").keySet());
			assertThat(ahead.recurring.pause("rv-pause")).isTrue();
			await().atMost(Duration.ofSeconds(10)).until(() -> redisMillis() > created.get(1) + 3000);
			for (long tick : created) {
				assertThat(behind.recurring.admit(RecurringFixture.occurrence(queue, "rv-pause", tick))).isFalse();
			}
			long before = redisMillis();
			assertThat(behind.recurring.resume("rv-pause")).isTrue();
			RecurringScheduleInfo info = ahead.recurring.find("rv-pause").orElseThrow();
			assertThat(info.missedTicks()).isZero();
			assertThat(info.nextTick().toEpochMilli()).isBetween(before, redisMillis() + 1000);
			assertThat(this.one.occurrences(queue, "rv-pause").keySet()).filteredOn((t) -> t > created.get(1))
				.allSatisfy((t) -> assertThat(t).isGreaterThanOrEqualTo(before));
		}
	}

	/**
	 * The schedule id is reused after a removal: nothing of the earlier incarnation (its
	 * counters, last outcome, overlap state) leaks into the next.
	 */
	@Test
	void aScheduleRemovedAndCreatedAgainUnderTheSameIdStartsClean() {
		String queue = "rv-reuse-queue";
		this.one.recurring.upsert(RecurringSchedule.fixedRate("rv-reuse", queue, Duration.ofSeconds(1))
			.overlap(OverlapPolicy.SKIP)
			.payload(Map.of("v", 1)));
		RedisTaskStore store = new RedisTaskStore(new StoreScripts(this.one.redis), this.one.settings);
		ClaimedTask claimed = claim(store, queue);
		assertThat(this.one.recurring.admit(context(queue, claimed))).isTrue();
		// still running, when the schedule is removed and created again
		assertThat(this.one.recurring.remove("rv-reuse")).isTrue();
		this.two.recurring.upsert(RecurringSchedule.fixedRate("rv-reuse", queue, Duration.ofSeconds(1))
			.overlap(OverlapPolicy.SKIP)
			.payload(Map.of("v", 2)));
		RecurringScheduleInfo info = this.two.recurring.find("rv-reuse").orElseThrow();
		assertThat(info.missedTicks()).isZero();
		assertThat(info.lastTick()).isNull();
		assertThat(info.lastOutcome()).isNull();
		long next = this.one.occurrences(queue, "rv-reuse").lastKey();
		await().atMost(Duration.ofSeconds(5)).until(() -> redisMillis() > next);
		assertThat(this.two.recurring.admit(RecurringFixture.occurrence(queue, "rv-reuse", next)))
			.as("the new incarnation does not overlap with a run of the old one")
			.isTrue();
		this.two.recurring.remove("rv-reuse");
	}

	/**
	 * "SKIP completes the tick's occurrence without calling the handler while the
	 * previous one has not finished: while it runs (leased), ..., or waits to run again
	 * after a crash". The instance that claimed the previous occurrence died before its
	 * gate ran (it held the task waiting for a handler permit, up to max-claim such
	 * tasks); the lease ran out, and another instance runs it as a redelivery (deliveries
	 * 2: TaskRunner does not ask the gate). While that run goes on, the next tick must be
	 * skipped.
	 */
	@Test
	void overlapSkipSkipsTheNextTickWhileAnOccurrenceRedeliveredAfterACrashBeforeItsGateRuns() {
		String queue = "rv-crash-queue";
		this.one.recurring
			.upsert(RecurringSchedule.fixedRate("rv-crash", queue, Duration.ofSeconds(1)).overlap(OverlapPolicy.SKIP));
		RedisTaskStore store = new RedisTaskStore(new StoreScripts(this.one.redis), this.one.settings);
		ClaimedTask held = claim(store, queue);
		long tick = tick(held, "rv-crash");
		// The instance dies holding it, before its gate ran. Lease 2 s + reap grace 0.5
		// s.
		ClaimedTask redelivered = await().atMost(Duration.ofSeconds(10)).until(() -> {
			ClaimBatch batch = store.claim(queue, 10, "n-" + System.nanoTime());
			return batch.tasks().stream().filter((t) -> t.id().equals(held.id())).findFirst().orElse(null);
		}, (task) -> task != null);
		assertThat(redelivered.deliveries()).as("a redelivery of the first attempt").isEqualTo(2);
		// The worker asks the gate on every delivery of the first attempt: admitted, its
		// handler now runs (leased). The next tick comes due.
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(queue, "rv-crash", tick))).isTrue();
		long next = tick + 1000;
		await().atMost(Duration.ofSeconds(5)).until(() -> redisMillis() > next);
		assertThat(this.one.occurrences(queue, "rv-crash")).containsEntry(tick, "A");
		assertThat(this.two.recurring.admit(RecurringFixture.occurrence(queue, "rv-crash", next)))
			.as("tick %d while the occurrence of tick %d runs (redelivered after a crash)", next, tick)
			.isFalse();
	}

	/**
	 * "A missed tick's occurrence is deleted (unless a worker holds it) ..., so a
	 * schedule whose queue no instance runs keeps at most its window of occurrences (a
	 * few tasks), not one per tick". Here the repair pass runs less often than the
	 * schedule ticks (as in production: a pass a minute, threshold 1 minute, a schedule
	 * every second), scaled down: every second, threshold 3 s, a pass every 4 s.
	 */
	@Test
	void aScheduleNobodyRunsKeepsAFewTasksAndNoGrowingReadyListBetweenSlowRepairPasses() throws Exception {
		String queue = "rv-unrun-queue";
		this.one.recurring.upsert(RecurringSchedule.fixedRate("rv-unrun", queue, Duration.ofSeconds(1))
			.misfireThreshold(Duration.ofSeconds(3)));
		List<String> seen = new ArrayList<>();
		long maxOccurrences = 0;
		long ready = 0;
		for (int i = 0; i < 4; i++) {
			Thread.sleep(4000);
			this.one.recurring.ensure("rv-unrun");
			long occurrences = this.one.occurrences(queue, "rv-unrun").size();
			ready = this.one.redis.opsForList().size(this.one.keys(queue).ready());
			maxOccurrences = Math.max(maxOccurrences, occurrences);
			seen.add("pass " + i + ": occurrences=" + occurrences + " ready-list=" + ready);
		}
		// The ticks within the threshold (3) plus the look-ahead (2): no more, pass after
		// pass.
		assertThat(maxOccurrences).as("occurrences kept, per pass: %s", seen).isLessThanOrEqualTo(6);
		assertThat(ready).as("ready hints left by deleted occurrences, per pass: %s", seen).isLessThanOrEqualTo(4);
	}

	/**
	 * "a repair pass every minute does the same: it only recreates occurrences lost with
	 * Redis data". The schedule's hash survives, its two created occurrences are lost
	 * (the task keys and their sched entries): the repair pass must recreate them.
	 */
	@Test
	void theRepairPassRecreatesOccurrencesLostWithRedisData() {
		String queue = "rv-lost-queue";
		this.one.recurring.upsert(RecurringSchedule.fixedRate("rv-lost", queue, Duration.ofMinutes(1)));
		TreeMap<Long, String> created = this.one.occurrences(queue, "rv-lost");
		assertThat(created).hasSize(2);
		for (long tick : created.keySet()) {
			String id = "rv-lost:" + tick;
			this.one.redis.delete(List.of(this.one.keys(queue).task(id), this.one.keys(queue).payload(id)));
			this.one.redis.opsForZSet().remove(this.one.keys(queue).sched(), id);
		}
		this.two.recurring.ensure("rv-lost");
		assertThat(this.one.occurrences(queue, "rv-lost").keySet()).as("occurrences after the repair pass")
			.containsAll(created.keySet());
	}

	/**
	 * "A cancelled or purged occurrence leaves the schedule's window": the user cancelled
	 * one future run; an unrelated pause and resume (or a redeploy that changes the
	 * payload) must not bring it back.
	 */
	@Test
	void aCancelledFutureOccurrenceStaysCancelledUntilAResumePlansItsTickAgain() {
		String queue = "rv-cancel-queue";
		this.one.recurring.upsert(RecurringSchedule.fixedRate("rv-cancel", queue, Duration.ofMinutes(1)));
		long first = this.one.occurrences(queue, "rv-cancel").firstKey();
		String id = "rv-cancel:" + first;
		assertThat(this.one.cancel(queue, id)).isTrue();
		this.one.recurring.ensure("rv-cancel");
		assertThat(this.one.occurrences(queue, "rv-cancel")).as("a cancelled occurrence is not created again")
			.doesNotContainKey(first);
		// Resume restarts the sequence from the next tick after now (docs/recurring.md):
		// every future tick is planned again, the cancelled one included.
		this.two.recurring.pause("rv-cancel");
		this.two.recurring.resume("rv-cancel");
		assertThat(this.one.occurrences(queue, "rv-cancel")).as("after pause and resume").containsKey(first);
	}

	/**
	 * "a tick is missed when its occurrence could not start within the schedule's
	 * misfire-threshold". An occurrence whose first instance died before its gate ran is
	 * redelivered (deliveries 2) and runs; it must not then be counted as a missed tick
	 * because its run lasts past the threshold.
	 */
	@Test
	void anOccurrenceRedeliveredAfterACrashBeforeItsGateIsNotCountedMissedWhileItRuns() {
		String queue = "rv-crash-missed-queue";
		this.one.recurring.upsert(RecurringSchedule.fixedRate("rv-crash-missed", queue, Duration.ofSeconds(10))
			.misfireThreshold(Duration.ofSeconds(3)));
		RedisTaskStore store = new RedisTaskStore(new StoreScripts(this.one.redis), this.one.settings);
		ClaimedTask held = await().atMost(Duration.ofSeconds(15)).until(() -> {
			ClaimBatch batch = store.claim(queue, 1, "n-" + System.nanoTime());
			return batch.tasks().isEmpty() ? null : batch.tasks().get(0);
		}, (task) -> task != null);
		long tick = tick(held, "rv-crash-missed");
		// The instance dies before its gate ran; another one runs it as a redelivery,
		// started within the threshold (lease 2 s + grace 0.5 s < 3 s).
		ClaimedTask redelivered = await().atMost(Duration.ofSeconds(10)).until(() -> {
			ClaimBatch batch = store.claim(queue, 10, "n-" + System.nanoTime());
			return batch.tasks().stream().filter((t) -> t.id().equals(held.id())).findFirst().orElse(null);
		}, (task) -> task != null);
		assertThat(redelivered.deliveries()).isEqualTo(2);
		long startedLate = redisMillis() - tick;
		// The worker asks the gate on every delivery of the first attempt.
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(queue, "rv-crash-missed", tick))).isTrue();
		// Its handler runs on (heartbeats keep its lease); a repair pass comes by 4 s
		// later.
		await().atMost(Duration.ofSeconds(10)).until(() -> redisMillis() > tick + 4000);
		store.extend(queue, List.of(new Lease(redelivered.id(), redelivered.token(), null)));
		this.two.recurring.ensure("rv-crash-missed");
		RecurringScheduleInfo info = this.two.recurring.find("rv-crash-missed").orElseThrow();
		assertThat(info.missedTicks())
			.as("tick %d started %d ms late (threshold 3 s) and is running", tick, startedLate)
			.isZero();
	}

	private ClaimedTask claim(RedisTaskStore store, String queue) {
		return await().atMost(Duration.ofSeconds(5)).until(() -> {
			ClaimBatch batch = store.claim(queue, 1, "n-" + System.nanoTime());
			return batch.tasks().isEmpty() ? null : batch.tasks().get(0);
		}, (task) -> task != null);
	}

	private static long tick(ClaimedTask claimed, String id) {
		return Long.parseLong(claimed.id().value().substring(id.length() + 1));
	}

	/** The context the Dispatcher builds for a claimed task (Dispatcher#submit). */
	private static TaskContext context(String queue, ClaimedTask task) {
		String id = task.id().value();
		String schedule = id.substring(0, id.lastIndexOf(':'));
		return new TaskContext(TaskId.of(id), queue, task.failures() + 1, task.deliveries(),
				Instant.ofEpochMilli(task.dueMs()), Instant.ofEpochMilli(task.createdMs()), Instant.now(),
				Map.of(OccurrenceGate.HEADER, schedule), task.token());
	}

	private long stopFor(String queue, String id, Duration gap) {
		String key = this.one.keys(queue).schedule(id);
		long late = (redisMillis() - gap.toMillis()) / 1000 * 1000;
		// the occurrences created before the "gap" are gone from the window
		for (String task : this.one.redis.keys(this.one.keys(queue).task(id + ":") + "*")) {
			this.one.redis.delete(task);
		}
		this.one.redis.delete(this.one.keys(queue).sched());
		this.one.redis.opsForHash().putAll(key, Map.of("n", Long.toString(late + 1000), "w", Long.toString(late)));
		String task = this.one.keys(queue).task(id + ":" + late);
		this.one.redis.opsForHash()
			.putAll(task, Map.of("s", "S", "d", Long.toString(late), "a", "0", "v", "0", "m", "4", "f", "0", "c",
					Long.toString(late)));
		this.one.redis.opsForZSet().add(this.one.keys(queue).sched(), id + ":" + late, late);
		return late;
	}

	private long redisMillis() {
		Long time = this.one.redis.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time());
		return (time != null) ? time : -1;
	}

	/** A clock a test moves, as NTP or a VM resume would. */
	static final class MutableClock extends Clock {

		final AtomicLong offset = new AtomicLong();

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			return this;
		}

		@Override
		public Instant instant() {
			return Instant.ofEpochMilli(millis());
		}

		@Override
		public long millis() {
			return System.currentTimeMillis() + this.offset.get();
		}

	}

}

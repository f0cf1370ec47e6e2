package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.MisfirePolicy;
import dev.delayedtasks.OverlapPolicy;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringSchedulePage;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.Lease;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Recurring schedules against a real Redis: each tick becomes one occurrence task with a
 * deterministic id, created with the advance of the schedule whoever races for it; the
 * misfire and overlap policies; changed definitions, pause, resume and removal.
 */
@WithRedis
class RedisRecurringTasksIntegrationTests {

	private static final String QUEUE = "reports";

	private RecurringFixture one;

	private RecurringFixture two;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.one = new RecurringFixture(redis);
		this.two = new RecurringFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.one.close();
		this.two.close();
	}

	@Test
	void upsertCreatesTheNextOccurrencesAsScheduledTasksDueAtTheirTicks() {
		RecurringScheduleInfo info = this.one.recurring
			.upsert(RecurringSchedule.fixedRate("every-minute", QUEUE, Duration.ofMinutes(1)).payload(Map.of("k", 1)));
		TreeMap<Long, String> occurrences = this.one.occurrences(QUEUE, "every-minute");
		assertThat(occurrences).hasSize(RedisRecurringTasks.LOOKAHEAD);
		long first = occurrences.firstKey();
		assertThat(first % 60_000).as("a whole minute").isZero();
		assertThat(first).isGreaterThan(System.currentTimeMillis() - 1000);
		assertThat(occurrences.lastKey()).isEqualTo(first + 60_000);
		assertThat(occurrences.values()).containsOnly("S");
		for (long tick : occurrences.keySet()) {
			assertThat(this.one.redis.opsForZSet().score(this.one.keys(QUEUE).sched(), "every-minute:" + tick))
				.isEqualTo((double) tick);
			assertThat(this.one.redis.opsForValue().get(this.one.keys(QUEUE).payload("every-minute:" + tick)))
				.contains("\"k\":1")
				.contains("\"dt-recurring\":\"every-minute\"");
		}
		assertThat(info.nextTick()).isEqualTo(Instant.ofEpochMilli(first));
		assertThat(info.expression()).isEqualTo("every PT1M");
		assertThat(info.origin()).isEqualTo("api");
		assertThat(info.occurrences()).isEqualTo(2);
		assertThat(this.one.recurring.list()).extracting(RecurringScheduleInfo::id).contains("every-minute");
	}

	@Test
	void instancesThatRaceCreateEachOccurrenceOnce() throws Exception {
		this.one.recurring.upsert(RecurringSchedule.cron("race", QUEUE, "0 * * * * *"));
		long first = this.one.occurrences(QUEUE, "race").firstKey();
		// Each start of the first occurrence tops the schedule up; eight instances at
		// once.
		ExecutorService pool = Executors.newFixedThreadPool(8);
		try {
			CountDownLatch go = new CountDownLatch(1);
			List<Future<Boolean>> admitted = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				RecurringFixture instance = (i % 2 == 0) ? this.one : this.two;
				admitted.add(pool.submit(() -> {
					go.await();
					instance.recurring.ensure("race");
					return instance.recurring.admit(RecurringFixture.occurrence(QUEUE, "race", first));
				}));
			}
			go.countDown();
			int runs = 0;
			for (Future<Boolean> future : admitted) {
				runs += future.get() ? 1 : 0;
			}
			assertThat(runs).as("one of the racing starts of the same occurrence runs it").isOne();
		}
		finally {
			pool.shutdownNow();
		}
		TreeMap<Long, String> occurrences = this.one.occurrences(QUEUE, "race");
		assertThat(occurrences.keySet()).containsExactly(first, first + 60_000, first + 120_000);
		assertThat(this.one.created("race") + this.two.created("race")).isEqualTo(3);
		assertThat(this.one.recurring.find("race").orElseThrow().occurrences()).isEqualTo(3);
	}

	@Test
	void skipPolicyCountsTicksMissedDuringAGapAndCarriesOnFromTheNextTick() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("gap-skip", QUEUE, Duration.ofSeconds(1))
			.misfireThreshold(Duration.ofSeconds(2)));
		long pendingLate = stopFor("gap-skip", Duration.ofSeconds(10));
		this.two.recurring.ensure("gap-skip");
		assertThat(this.two.missed("gap-skip")).as("the late pending tick and those never created").isBetween(9L, 12L);
		assertThat(this.two.recurring.admit(RecurringFixture.occurrence(QUEUE, "gap-skip", pendingLate))).isFalse();
		TreeMap<Long, String> occurrences = this.one.occurrences(QUEUE, "gap-skip");
		long now = scriptNow("gap-skip");
		assertThat(occurrences.tailMap(pendingLate, false).keySet())
			.allSatisfy((tick) -> assertThat(tick).isGreaterThanOrEqualTo(now - 2000));
		RecurringScheduleInfo info = this.one.recurring.find("gap-skip").orElseThrow();
		assertThat(info.missedTicks()).isEqualTo(this.two.missed("gap-skip"));
		assertThat(info.lastMissedAt()).isNotNull();
	}

	@Test
	void runOncePolicyRunsOneOccurrenceForAllMissedTicks() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("gap-once", QUEUE, Duration.ofSeconds(1))
			.misfireThreshold(Duration.ofSeconds(2))
			.misfire(MisfirePolicy.RUN_ONCE));
		long pendingLate = stopFor("gap-once", Duration.ofSeconds(10));
		this.two.recurring.ensure("gap-once");
		long now = scriptNow("gap-once");
		List<Long> lateInWindow = window("gap-once").stream().filter((tick) -> tick < now - 2000).toList();
		assertThat(lateInWindow).as("one occurrence, for the latest missed tick, stands for all of them").hasSize(1);
		assertThat(this.one.occurrences(QUEUE, "gap-once")).containsEntry(lateInWindow.get(0), "R");
		assertThat(this.two.missed("gap-once")).isBetween(8L, 11L);
		assertThat(this.two.recurring.admit(RecurringFixture.occurrence(QUEUE, "gap-once", pendingLate))).isFalse();
		assertThat(this.two.recurring.admit(RecurringFixture.occurrence(QUEUE, "gap-once", lateInWindow.get(0))))
			.isTrue();
	}

	@Test
	void runAllPolicyRunsTheLatestMissedTicksUpToItsBound() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("gap-all", QUEUE, Duration.ofSeconds(1))
			.misfireThreshold(Duration.ofSeconds(2))
			.misfire(MisfirePolicy.RUN_ALL, 4));
		long pendingLate = stopFor("gap-all", Duration.ofSeconds(10));
		this.two.recurring.ensure("gap-all");
		long now = scriptNow("gap-all");
		TreeMap<Long, String> occurrences = this.one.occurrences(QUEUE, "gap-all");
		List<Long> late = occurrences.keySet().stream().filter((tick) -> tick < now - 2000).toList();
		// The occurrence created before the gap is a missed tick now: deleted, not left
		// to
		// be skipped when it comes due.
		assertThat(late).hasSize(4).doesNotContain(pendingLate);
		assertThat(occurrences.subMap(pendingLate, false, now - 2000, false).values())
			.as("missed ticks created ready to run")
			.containsOnly("R");
		assertThat(window("gap-all")).doesNotContain(pendingLate).containsAll(late);
		assertThat(this.two.recurring.admit(RecurringFixture.occurrence(QUEUE, "gap-all", pendingLate))).isFalse();
		for (long tick : late) {
			assertThat(this.two.recurring.admit(RecurringFixture.occurrence(QUEUE, "gap-all", tick))).isTrue();
		}
	}

	@Test
	void overlapSkipSkipsATickWhileThePreviousOccurrenceRuns() {
		this.one.recurring
			.upsert(RecurringSchedule.fixedRate("overlap", QUEUE, Duration.ofMinutes(1)).overlap(OverlapPolicy.SKIP));
		List<Long> ticks = new ArrayList<>(this.one.occurrences(QUEUE, "overlap").keySet());
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(QUEUE, "overlap", ticks.get(0)))).isTrue();
		// The first occurrence is leased by a worker and still runs.
		this.one.redis.opsForHash().put(this.one.keys(QUEUE).task("overlap:" + ticks.get(0)), "s", "A");
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(QUEUE, "overlap", ticks.get(1)))).isFalse();
		assertThat(this.one.skipped.get("overlap")).hasValue(1);
		// Once it is done (acked: deleted) the next tick runs.
		this.one.redis.delete(this.one.keys(QUEUE).task("overlap:" + ticks.get(0)));
		long third = this.one.occurrences(QUEUE, "overlap").lastKey();
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(QUEUE, "overlap", third))).isTrue();
	}

	@Test
	void overlapSkipSkipsATickWhileThePreviousOccurrenceWaitsForARetryOrARerunAfterACrash() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("unfinished", "unfinished-queue", Duration.ofSeconds(1))
			.overlap(OverlapPolicy.SKIP));
		RedisTaskStore store = new RedisTaskStore(new StoreScripts(this.one.redis), this.one.settings);
		ClaimedTask claimed = await().atMost(Duration.ofSeconds(5)).until(() -> {
			ClaimBatch batch = store.claim("unfinished-queue", 1, "n-" + System.nanoTime());
			return batch.tasks().isEmpty() ? null : batch.tasks().get(0);
		}, (task) -> task != null);
		long tick = Long.parseLong(claimed.id().value().substring("unfinished:".length()));
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("unfinished-queue", "unfinished", tick)))
			.isTrue();
		// Its handler failed: it waits for a retry an hour away, unfinished.
		store.fail("unfinished-queue", new Lease(claimed.id(), claimed.token(), null), new TaskFailure(
				Duration.ofHours(1), FailureReason.FAILED, "java.lang.IllegalStateException", "boom", ""));
		assertThat(this.one.occurrences("unfinished-queue", "unfinished")).containsEntry(tick, "S");
		long next = tick + 1000;
		await().atMost(Duration.ofSeconds(5)).until(() -> System.currentTimeMillis() > next + 100);
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("unfinished-queue", "unfinished", next)))
			.as("the next tick, while the previous occurrence waits for its retry")
			.isFalse();
		assertThat(this.one.skipped.get("overlap")).hasValue(1);
		// Recovered after a crash: ready to run again, still unfinished.
		this.one.redis.opsForHash().put(this.one.keys("unfinished-queue").task(claimed.id().value()), "s", "R");
		long after = next + 1000;
		await().atMost(Duration.ofSeconds(5)).until(() -> System.currentTimeMillis() > after + 100);
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("unfinished-queue", "unfinished", after)))
			.isFalse();
		assertThat(this.one.skipped.get("overlap")).hasValue(2);
		this.one.recurring.remove("unfinished");
	}

	@Test
	void overlapAllowRunsATickWhileThePreviousOccurrenceRuns() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("allow", QUEUE, Duration.ofMinutes(1)));
		List<Long> ticks = new ArrayList<>(this.one.occurrences(QUEUE, "allow").keySet());
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(QUEUE, "allow", ticks.get(0)))).isTrue();
		this.one.redis.opsForHash().put(this.one.keys(QUEUE).task("allow:" + ticks.get(0)), "s", "A");
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(QUEUE, "allow", ticks.get(1)))).isTrue();
	}

	@Test
	void occurrencesLostWithRedisDataAreCreatedAgainOrCountedMissed() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("lost", "lost-queue", Duration.ofMinutes(1)));
		TreeMap<Long, String> created = this.one.occurrences("lost-queue", "lost");
		PartitionKeys keys = this.one.keys("lost-queue");
		// Lost with Redis data (not cancelled): the task keys and their index entries go.
		for (long tick : created.keySet()) {
			String id = "lost:" + tick;
			this.one.redis.opsForZSet().remove(keys.sched(), id);
			this.one.redis.delete(List.of(keys.task(id), keys.payload(id)));
		}
		this.two.recurring.ensure("lost");
		assertThat(this.one.occurrences("lost-queue", "lost").keySet()).as("created again")
			.containsAll(created.keySet());
		assertThat(this.two.missed("lost")).isZero();
		this.one.recurring.remove("lost");
	}

	@Test
	void theRepairPassRegistersADeclaredScheduleAgainOnceRedisLostIt() {
		RecurringDeclarations declarations = new RecurringDeclarations();
		declarations.add(new ScheduleDeclaration("@Recurring on test#run", "restored", "restored-queue", null, "1h",
				null, null, null, null, null, null));
		RecurringScheduleRegistrar registrar = new RecurringScheduleRegistrar(this.one.recurring, declarations,
				List.of(), Set.of(), 0, new RecurringSnapshot(Duration.ofMinutes(2)), Duration.ofMinutes(1), 100,
				Duration.ofMillis(500));
		registrar.start();
		try {
			assertThat(this.one.recurring.find("restored")).isPresent();
			// Redis loses the schedule and its index entry.
			this.one.redis.delete(List.of(this.one.keys("restored-queue").schedule("restored"),
					this.one.settings.keyPrefix() + ":recurring"));
			assertThat(this.one.recurring.find("restored")).isEmpty();
			await().atMost(Duration.ofSeconds(10)).until(() -> this.one.recurring.find("restored").isPresent());
			assertThat(this.one.occurrences("restored-queue", "restored")).hasSize(RedisRecurringTasks.LOOKAHEAD);
		}
		finally {
			registrar.stop();
			this.one.recurring.remove("restored");
		}
	}

	@Test
	void aCancelledOccurrenceIsNeitherAMissedTickNorTheNextOne() throws InterruptedException {
		this.one.recurring.upsert(RecurringSchedule.cron("cancelled", "cancelled-queue", "*/4 * * * * *")
			.misfireThreshold(Duration.ofSeconds(2)));
		long first = this.one.occurrences("cancelled-queue", "cancelled").firstKey();
		PartitionKeys keys = this.one.keys("cancelled-queue");
		String id = "cancelled:" + first;
		assertThat(this.one.cancel("cancelled-queue", id)).isTrue();
		assertThat(this.one.redis.hasKey(keys.task(id))).isFalse();
		// Past its misfire threshold, before the next tick's.
		Thread.sleep(Math.max(0, first + 2_500 - System.currentTimeMillis()));
		this.one.recurring.ensure("cancelled");
		RecurringScheduleInfo info = this.one.recurring.find("cancelled").orElseThrow();
		assertThat(info.missedTicks()).as("a cancelled occurrence is not a missed tick").isZero();
		assertThat(info.nextTick()).isAfter(Instant.ofEpochMilli(first));
		this.one.recurring.remove("cancelled");
	}

	@Test
	void aScheduleNobodyRunsKeepsNoMoreThanItsWindowOfOccurrences() throws InterruptedException {
		this.one.recurring.upsert(
				RecurringSchedule.cron("unrun", "unrun-queue", "* * * * * *").misfireThreshold(Duration.ofSeconds(1)));
		// The repair passes of instances whose queue has no handler: nothing ever runs.
		for (int i = 0; i < 6; i++) {
			Thread.sleep(1000);
			this.one.recurring.ensure("unrun");
		}
		assertThat(this.one.occurrences("unrun-queue", "unrun")).as("occurrences kept").hasSizeLessThanOrEqualTo(4);
		assertThat(this.one.recurring.find("unrun").orElseThrow().missedTicks()).isGreaterThanOrEqualTo(3);
		this.one.recurring.remove("unrun");
	}

	@Test
	void pagesOfSchedulesListEveryScheduleOnceById() {
		for (String id : List.of("pg-c", "pg-a", "pg-e", "pg-b", "pg-d")) {
			this.one.recurring.upsert(RecurringSchedule.fixedRate(id, QUEUE, Duration.ofHours(1)));
		}
		List<String> all = this.one.recurring.list().stream().map(RecurringScheduleInfo::id).toList();
		assertThat(all).isSorted().contains("pg-a", "pg-b", "pg-c", "pg-d", "pg-e");
		List<String> paged = new ArrayList<>();
		String after = null;
		do {
			RecurringSchedulePage page = this.one.recurring.list(after, 2);
			assertThat(page.schedules()).hasSizeLessThanOrEqualTo(2);
			assertThat(page.total()).as("unreadable ones included").isEqualTo(this.one.recurring.ids().size());
			page.schedules().forEach((schedule) -> paged.add(schedule.id()));
			after = page.next();
		}
		while (after != null);
		assertThat(paged).as("every readable schedule once, by id").isEqualTo(all);
		RecurringSchedulePage pg = this.one.recurring.list("pg-b", 2);
		assertThat(pg.schedules()).extracting(RecurringScheduleInfo::id).containsExactly("pg-c", "pg-d");
		RecurringSchedulePage last = this.one.recurring.list(all.get(all.size() - 2), 2);
		assertThat(last.schedules()).hasSize(1);
		assertThat(last.next()).isNull();
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> this.one.recurring.list(null, 0))
			.withMessageContaining("at least 1");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.one.recurring.list("not an id", 2));
	}

	@Test
	void aScheduleWhoseDataCannotBeReadIsLeftOutOfTheListNotEveryScheduleWithIt() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("readable", QUEUE, Duration.ofHours(1)));
		this.one.recurring.upsert(RecurringSchedule.fixedRate("corrupt", QUEUE, Duration.ofHours(1)));
		String key = this.one.keys(QUEUE).schedule("corrupt");
		this.one.redis.delete(key);
		this.one.redis.opsForValue().set(key, "not a hash");
		assertThat(this.one.recurring.list()).extracting(RecurringScheduleInfo::id)
			.contains("readable")
			.doesNotContain("corrupt");
		this.one.redis.delete(key);
		this.one.recurring.remove("readable");
	}

	@Test
	void aChangedPayloadTakesEffectFromTheNextTick() {
		this.one.recurring
			.upsert(RecurringSchedule.fixedRate("repaid", QUEUE, Duration.ofMinutes(1)).payload(Map.of("version", 1)));
		TreeMap<Long, String> before = this.one.occurrences(QUEUE, "repaid");
		this.two.recurring
			.upsert(RecurringSchedule.fixedRate("repaid", QUEUE, Duration.ofMinutes(1)).payload(Map.of("version", 2)));
		TreeMap<Long, String> after = this.one.occurrences(QUEUE, "repaid");
		// The same ticks: the occurrences already created are kept, not doubled...
		assertThat(after.keySet()).containsAll(before.keySet());
		// ...and run with the new definition from the next one on.
		for (long tick : after.keySet()) {
			String id = "repaid:" + tick;
			assertThat(this.one.redis.opsForValue().get(this.one.keys(QUEUE).payload(id))).as("payload of %s", id)
				.contains("\"version\":2");
		}
		this.one.recurring.remove("repaid");
	}

	@Test
	void aChangedCronTakesEffectFromItsNextTickWithoutDuplicates() {
		this.one.recurring.upsert(RecurringSchedule.cron("changing", QUEUE, "0 0 * * * *"));
		TreeMap<Long, String> hourly = this.one.occurrences(QUEUE, "changing");
		RecurringScheduleInfo same = this.two.recurring
			.upsert(RecurringSchedule.cron("changing", QUEUE, "0 0 * * * *"));
		assertThat(this.one.occurrences(QUEUE, "changing")).as("an unchanged definition changes nothing")
			.isEqualTo(hourly);
		assertThat(same.occurrences()).isEqualTo(2);
		this.two.recurring.upsert(RecurringSchedule.cron("changing", QUEUE, "0 */30 * * * *"));
		// The next full hour is also one of the next two half-hours: adopted, not
		// duplicated.
		assertThat(this.one.occurrences(QUEUE, "changing")).hasSize(3);
		assertThat(this.one.recurring.find("changing").orElseThrow().expression()).isEqualTo("0 */30 * * * *");
		long nextHour = hourly.firstKey();
		long hourAfter = hourly.lastKey();
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(QUEUE, "changing", hourAfter)))
			.as("a tick of the old definition only")
			.isFalse();
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(QUEUE, "changing", nextHour)))
			.as("a tick of both definitions")
			.isTrue();
		assertThat(this.one.occurrences(QUEUE, "changing").keySet())
			.allSatisfy((tick) -> assertThat(tick % 1_800_000).isZero());
	}

	@Test
	void aPausedScheduleSkipsItsOccurrencesAndResumesFromItsNextTick() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("pausing", QUEUE, Duration.ofMinutes(1)));
		long first = this.one.occurrences(QUEUE, "pausing").firstKey();
		assertThat(this.two.recurring.pause("pausing")).isTrue();
		assertThat(this.one.recurring.find("pausing").orElseThrow().paused()).isTrue();
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(QUEUE, "pausing", first))).isFalse();
		assertThat(this.one.skipped.get("paused")).hasValue(1);
		assertThat(this.two.recurring.resume("pausing")).isTrue();
		RecurringScheduleInfo info = this.one.recurring.find("pausing").orElseThrow();
		assertThat(info.paused()).isFalse();
		assertThat(info.missedTicks()).isZero();
		assertThat(this.one.occurrences(QUEUE, "pausing")).hasSize(2);
	}

	@Test
	void triggerCreatesOneReadyOccurrenceThatRunsAsATickWithoutMovingTheTicks() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("on-demand", "on-demand-queue", Duration.ofHours(1)));
		TreeMap<Long, String> ticks = this.one.occurrences("on-demand-queue", "on-demand");
		TaskId triggered = this.two.recurring.trigger("on-demand").orElseThrow();
		assertThat(triggered.value()).startsWith("on-demand:");
		long tick = Long.parseLong(triggered.value().substring("on-demand:".length()));
		assertThat(tick).isBetween(System.currentTimeMillis() - 5000, System.currentTimeMillis() + 5000);
		TreeMap<Long, String> after = this.one.occurrences("on-demand-queue", "on-demand");
		assertThat(after).containsEntry(tick, "R").hasSize(ticks.size() + 1);
		assertThat(after.tailMap(tick, false)).isEqualTo(ticks);
		assertThat(this.one.recurring.find("on-demand").orElseThrow().occurrences()).isEqualTo(ticks.size() + 1);
		// A worker claims it at once and the gate admits it, once.
		RedisTaskStore store = new RedisTaskStore(new StoreScripts(this.one.redis), this.one.settings);
		ClaimBatch batch = store.claim("on-demand-queue", 10, "n-" + System.nanoTime());
		assertThat(batch.tasks()).extracting(ClaimedTask::id).containsExactly(triggered);
		TaskContext context = RecurringFixture.occurrence("on-demand-queue", "on-demand", tick);
		assertThat(this.one.recurring.admit(context)).isTrue();
		assertThat(this.two.recurring.admit(context)).as("a second start without a release").isFalse();
		this.one.recurring.finished(context, null);
		RecurringScheduleInfo info = this.one.recurring.find("on-demand").orElseThrow();
		assertThat(info.lastTick()).isEqualTo(Instant.ofEpochMilli(tick));
		assertThat(info.lastOutcome()).isEqualTo("succeeded");
		assertThat(info.nextTick()).as("the ticks did not move").isEqualTo(Instant.ofEpochMilli(ticks.firstKey()));
		assertThat(info.missedTicks()).isZero();
		this.one.recurring.remove("on-demand");
	}

	@Test
	void aTriggeredOccurrenceFollowsTheOverlapPolicyAndAPausedOrUnknownScheduleIsNotTriggered() {
		this.one.recurring.upsert(
				RecurringSchedule.fixedRate("busy", "busy-queue", Duration.ofMinutes(1)).overlap(OverlapPolicy.SKIP));
		long first = this.one.occurrences("busy-queue", "busy").firstKey();
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("busy-queue", "busy", first))).isTrue();
		// The first occurrence is leased by a worker and still runs.
		this.one.redis.opsForHash().put(this.one.keys("busy-queue").task("busy:" + first), "s", "A");
		long triggered = Long
			.parseLong(this.one.recurring.trigger("busy").orElseThrow().value().substring("busy:".length()));
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("busy-queue", "busy", triggered))).isFalse();
		assertThat(this.one.skipped.get("overlap")).hasValue(1);
		this.one.recurring.pause("busy");
		int before = this.one.occurrences("busy-queue", "busy").size();
		assertThatIllegalStateException().isThrownBy(() -> this.two.recurring.trigger("busy"))
			.withMessageContaining("'busy'")
			.withMessageContaining("paused");
		assertThat(this.one.occurrences("busy-queue", "busy")).hasSize(before);
		assertThat(this.one.recurring.trigger("no-such-schedule")).isEmpty();
		this.one.recurring.remove("busy");
		assertThat(this.one.recurring.trigger("busy")).isEmpty();
	}

	@Test
	void aRemovedScheduleSkipsItsPendingOccurrences() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("removed", QUEUE, Duration.ofMinutes(1)));
		long first = this.one.occurrences(QUEUE, "removed").firstKey();
		assertThat(this.two.recurring.remove("removed")).isTrue();
		assertThat(this.two.recurring.remove("removed")).isFalse();
		assertThat(this.one.recurring.find("removed")).isEmpty();
		assertThat(this.one.recurring.list()).extracting(RecurringScheduleInfo::id).doesNotContain("removed");
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(QUEUE, "removed", first))).isFalse();
		assertThat(this.one.redis.hasKey(this.one.keys(QUEUE).schedule("removed"))).isFalse();
	}

	@Test
	void anOccurrenceGivenBackByAGracefulStopIsAdmittedAgainButASecondStartIsNot() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("released", "released-queue", Duration.ofSeconds(1)));
		RedisTaskStore store = new RedisTaskStore(new StoreScripts(this.one.redis), this.one.settings);
		ClaimedTask claimed = await().atMost(Duration.ofSeconds(5)).until(() -> {
			ClaimBatch batch = store.claim("released-queue", 1, "n-" + System.nanoTime());
			return batch.tasks().isEmpty() ? null : batch.tasks().get(0);
		}, (task) -> task != null);
		long tick = Long.parseLong(claimed.id().value().substring("released:".length()));
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("released-queue", "released", tick))).isTrue();
		// A second first-delivery start without a release (a duplicate) is not admitted.
		assertThat(this.two.recurring.admit(RecurringFixture.occurrence("released-queue", "released", tick))).isFalse();
		// A graceful stop gives the run back: its next start is a first delivery again,
		// and runs.
		store.release("released-queue", List.of(new Lease(claimed.id(), claimed.token(), null)));
		assertThat(this.two.recurring.admit(RecurringFixture.occurrence("released-queue", "released", tick))).isTrue();
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("released-queue", "released", tick))).isFalse();
		this.one.recurring.remove("released");
	}

	@Test
	void aTaskUnderAnOccurrenceIdThatIsNotTheSchedulesIsNotAdoptedAsTheTick() {
		long tick = (System.currentTimeMillis() / 60_000 + 1) * 60_000;
		String id = "spoofed:" + tick;
		PartitionKeys keys = this.one.keys(QUEUE);
		// Written to Redis by other means than the producer, which refuses the id.
		this.one.redis.opsForHash()
			.putAll(keys.task(id), Map.of("s", "S", "a", "0", "v", "0", "m", "3", "f", "0", "d", Long.toString(tick),
					"c", Long.toString(System.currentTimeMillis())));
		this.one.redis.opsForValue().set(keys.payload(id), "{\"h\":{},\"b\":\"not the tick\"}");
		this.one.redis.opsForZSet().add(keys.sched(), id, tick);
		this.one.recurring.upsert(RecurringSchedule.fixedRate("spoofed", QUEUE, Duration.ofMinutes(1)));
		String window = (String) this.one.schedule(QUEUE, "spoofed").get("w");
		assertThat(window).as("created ticks")
			.doesNotContain(Long.toString(tick))
			.contains(Long.toString(tick + 60_000));
		// The task is left as it was: not rewritten into an occurrence.
		assertThat(this.one.redis.opsForValue().get(keys.payload(id))).contains("not the tick");
		// Its first delivery is not admitted as the tick.
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(QUEUE, "spoofed", tick))).isFalse();
		this.one.recurring.remove("spoofed");
	}

	@Test
	void anIdTakenOnAnotherQueueIsRefused() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("taken", QUEUE, Duration.ofMinutes(1)));
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(
				() -> this.two.recurring.upsert(RecurringSchedule.fixedRate("taken", "other", Duration.ofMinutes(1))))
			.withMessageContaining("'taken' already exists on queue 'reports'");
	}

	private List<Long> window(String id) {
		List<Long> window = new ArrayList<>();
		for (String tick : this.one.schedule(QUEUE, id).get("w").toString().split(",")) {
			window.add(Long.parseLong(tick));
		}
		return window;
	}

	/** Redis time when the last missed ticks were counted. */
	private long scriptNow(String id) {
		return Long.parseLong(this.one.schedule(QUEUE, id).get("lm").toString());
	}

	@Test
	void anExpressionWithoutFurtherTicksCreatesNothingAndStillDecidesAStart() {
		RecurringScheduleInfo info = this.one.recurring.upsert(RecurringSchedule.cron("never", QUEUE, "0 0 0 30 2 *"));
		assertThat(info.nextTick()).isNull();
		assertThat(this.one.occurrences(QUEUE, "never")).isEmpty();
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence(QUEUE, "never", 1_000L))).isFalse();
	}

	@Test
	void aQueueWrittenByAnotherLayoutVersionIsRefused() {
		this.one.redis.opsForHash().put(this.one.keys("old-layout").meta(), "v", "0");
		assertThatExceptionOfType(DelayedTaskException.class)
			.isThrownBy(() -> this.one.recurring
				.upsert(RecurringSchedule.fixedRate("old", "old-layout", Duration.ofMinutes(1))))
			.withMessageContaining("Queue 'old-layout' in Redis has data layout version 0");
	}

	/**
	 * Make the schedule look as if every instance stopped {@code gap} ago, just after
	 * creating its next occurrences: one pending occurrence now late, and its next tick
	 * in the past.
	 * @return the tick of the late pending occurrence
	 */
	private long stopFor(String id, Duration gap) {
		// Ticks are a second apart and a tick is missed 2 s after it: start just past a
		// whole second, so that no tick turns missed between the test's call that decides
		// and its assertions (the late set would shift by one, a flake on a slow
		// machine).
		while (System.currentTimeMillis() % 1000 > 100) {
			Thread.onSpinWait();
		}
		String key = this.one.keys(QUEUE).schedule(id);
		long late = (System.currentTimeMillis() - gap.toMillis()) / 1000 * 1000;
		this.one.redis.opsForHash().putAll(key, Map.of("n", Long.toString(late + 1000), "w", Long.toString(late)));
		String task = this.one.keys(QUEUE).task(id + ":" + late);
		this.one.redis.opsForHash()
			.putAll(task, Map.of("s", "S", "d", Long.toString(late), "a", "0", "v", "0", "m", "4", "f", "0", "c",
					Long.toString(late)));
		this.one.redis.opsForZSet().add(this.one.keys(QUEUE).sched(), id + ":" + late, late);
		return late;
	}

}

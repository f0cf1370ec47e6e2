package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

import dev.delayedtasks.MisfirePolicy;
import dev.delayedtasks.OverlapPolicy;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.Lease;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code RecurringTasks.trigger} against the gate's rules: the reported next tick does
 * not move; triggers in the same millisecond are one occurrence; a triggered occurrence
 * given back by a graceful stop runs again once; triggers nobody starts are counted
 * missed and leave the window; pause, removal and a changed definition before it runs;
 * the overlap policy between triggers.
 */
@WithRedis
class RecurringTriggerIntegrationTests {

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

	private static long tick(String schedule, TaskId id) {
		return Long.parseLong(id.value().substring(schedule.length() + 1));
	}

	// "The ticks do not move: the next tick comes at its time" - as reported too.
	@Test
	void aPendingTriggerDoesNotChangeTheReportedNextTick() {
		RecurringScheduleInfo before = this.one.recurring
			.upsert(RecurringSchedule.fixedRate("next-tick", "next-tick-q", Duration.ofHours(1)));
		TaskId triggered = this.one.recurring.trigger("next-tick").orElseThrow();
		RecurringScheduleInfo after = this.one.recurring.find("next-tick").orElseThrow();
		assertThat(after.nextTick()).as("next tick after trigger %s", triggered).isEqualTo(before.nextTick());
	}

	// Triggers in the same millisecond of Redis time are one occurrence (its id is the
	// schedule's and that millisecond): none is doubled and every id answered exists.
	@Test
	void rapidTriggersInTheSameMillisecondShareOneOccurrenceAndNoneIsLostOrDoubled() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("rapid", "rapid-q", Duration.ofHours(1)));
		int before = this.one.occurrences("rapid-q", "rapid").size();
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			ids.add(this.one.recurring.trigger("rapid").orElseThrow().value());
		}
		Set<String> distinct = new HashSet<>(ids);
		assertThat(this.one.occurrences("rapid-q", "rapid")).hasSize(before + distinct.size());
		for (String id : distinct) {
			assertThat(this.one.occurrences("rapid-q", "rapid"))
				.containsKey(Long.parseLong(id.substring("rapid:".length())));
		}
		assertThat(this.one.recurring.find("rapid").orElseThrow().occurrences()).isEqualTo(before + distinct.size());
	}

	// Graceful stop (release) and crash-like redelivery of a triggered occurrence.
	@Test
	void aTriggeredOccurrenceGivenBackByAGracefulStopRunsAgainOnce() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("released-t", "released-t-q", Duration.ofHours(1)));
		TaskId triggered = this.one.recurring.trigger("released-t").orElseThrow();
		long tick = tick("released-t", triggered);
		RedisTaskStore store = new RedisTaskStore(new StoreScripts(this.one.redis), this.one.settings);
		ClaimBatch batch = store.claim("released-t-q", 10, "n-" + System.nanoTime());
		ClaimedTask claimed = batch.tasks().get(0);
		assertThat(claimed.id()).isEqualTo(triggered);
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("released-t-q", "released-t", tick))).isTrue();
		store.release("released-t-q", List.of(new Lease(claimed.id(), claimed.token(), null)));
		assertThat(this.two.recurring.admit(RecurringFixture.occurrence("released-t-q", "released-t", tick))).isTrue();
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("released-t-q", "released-t", tick))).isFalse();
	}

	// Memory over time: triggers of a schedule nobody runs leave the window once missed.
	@Test
	void triggersNobodyStartsAreCountedMissedAndLeaveTheWindow() throws InterruptedException {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("unrun", "unrun-q", Duration.ofHours(1))
			.misfireThreshold(Duration.ofSeconds(1)));
		TreeMap<Long, String> ticks = this.one.occurrences("unrun-q", "unrun");
		Set<String> triggered = new HashSet<>();
		while (triggered.size() < 50) {
			triggered.add(this.one.recurring.trigger("unrun").orElseThrow().value());
			Thread.sleep(2);
		}
		assertThat(this.one.schedule("unrun-q", "unrun").get("w").toString().split(",")).hasSize(50 + ticks.size());
		Thread.sleep(1500);
		this.two.recurring.ensure("unrun");
		assertThat(this.one.schedule("unrun-q", "unrun").get("w").toString().split(",")).hasSize(ticks.size());
		assertThat(this.one.occurrences("unrun-q", "unrun")).isEqualTo(ticks);
		RecurringScheduleInfo info = this.one.recurring.find("unrun").orElseThrow();
		assertThat(info.missedTicks()).isEqualTo(50);
		assertThat(info.nextTick().toEpochMilli()).isEqualTo(ticks.firstKey());
		assertThat(this.one.redis.opsForList().size(this.one.keys("unrun-q").ready())).isZero();
	}

	// Trigger, then pause before it runs: skipped; resumed: still not run twice.
	@Test
	void aTriggerPausedBeforeItRunsIsSkippedAndNotRunAfterResume() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("tp", "tp-q", Duration.ofHours(1)));
		long tick = tick("tp", this.one.recurring.trigger("tp").orElseThrow());
		this.one.recurring.pause("tp");
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("tp-q", "tp", tick))).isFalse();
		this.one.recurring.resume("tp");
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("tp-q", "tp", tick))).isFalse();
	}

	// Trigger, then removed before it runs: skipped.
	@Test
	void aTriggerOfARemovedScheduleIsSkipped() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("tr", "tr-q", Duration.ofHours(1)));
		long tick = tick("tr", this.one.recurring.trigger("tr").orElseThrow());
		this.one.recurring.remove("tr");
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("tr-q", "tr", tick))).isFalse();
	}

	// Trigger, then the definition changes (payload) before it runs: it still runs once,
	// a second start does not.
	@Test
	void aTriggerOfAChangedScheduleRunsOnce() {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("tc", "tc-q", Duration.ofHours(1)).payload("old"));
		long tick = tick("tc", this.one.recurring.trigger("tc").orElseThrow());
		this.one.recurring.upsert(RecurringSchedule.fixedRate("tc", "tc-q", Duration.ofHours(1)).payload("new"));
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("tc-q", "tc", tick))).isTrue();
		assertThat(this.two.recurring.admit(RecurringFixture.occurrence("tc-q", "tc", tick))).isFalse();
		this.one.recurring.finished(RecurringFixture.occurrence("tc-q", "tc", tick), null);
		assertThat(this.one.recurring.find("tc").orElseThrow().lastOutcome()).isEqualTo("succeeded");
	}

	// Overlap SKIP: a trigger while a triggered occurrence runs is skipped; a tick after
	// it finishes is not.
	@Test
	void overlapSkipAppliesBetweenTriggers() {
		this.one.recurring
			.upsert(RecurringSchedule.fixedRate("ts", "ts-q", Duration.ofHours(1)).overlap(OverlapPolicy.SKIP));
		long first = tick("ts", this.one.recurring.trigger("ts").orElseThrow());
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("ts-q", "ts", first))).isTrue();
		this.one.redis.opsForHash().put(this.one.keys("ts-q").task("ts:" + first), "s", "A");
		long second = first;
		while (second == first) {
			second = tick("ts", this.one.recurring.trigger("ts").orElseThrow());
		}
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("ts-q", "ts", second))).isFalse();
		this.one.redis.opsForHash().put(this.one.keys("ts-q").task("ts:" + first), "s", "D");
		long third = second;
		while (third == second) {
			third = tick("ts", this.one.recurring.trigger("ts").orElseThrow());
		}
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("ts-q", "ts", third))).isTrue();
	}

	// RUN_ONCE misfire with a late trigger and late ticks: the triggered occurrence must
	// not
	// stand in for the missed tick and hide it (missed counts).
	@Test
	void aLateTriggerIsCountedMissedLikeATick() throws InterruptedException {
		this.one.recurring.upsert(RecurringSchedule.fixedRate("lt", "lt-q", Duration.ofHours(1))
			.misfire(MisfirePolicy.SKIP)
			.misfireThreshold(Duration.ofSeconds(1)));
		long tick = tick("lt", this.one.recurring.trigger("lt").orElseThrow());
		Thread.sleep(1500);
		assertThat(this.one.recurring.admit(RecurringFixture.occurrence("lt-q", "lt", tick))).isFalse();
		assertThat(this.one.recurring.find("lt").orElseThrow().missedTicks()).isEqualTo(1);
	}

}

package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.internal.recurring.RecurringChild.Ran;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Recurring schedules across real application processes: three instances create one
 * occurrence per tick of an every-second schedule, also when the timer owner is killed
 * with SIGKILL; a restart after a gap applies each misfire policy; a cron changed between
 * restarts takes effect from its next tick.
 */
@WithRedis(privateServer = true)
class RecurringProcessIntegrationTests {

	private static final String QUEUE = "recurring-processes";

	private final TestRedis redis;

	private RecurringFixture fixture;

	private final List<RecurringChild> children = new ArrayList<>();

	RecurringProcessIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@BeforeEach
	void setUp() {
		// One private Redis per class: no schedule of an earlier test may run here.
		this.redis.deleteKeys();
		this.fixture = new RecurringFixture(this.redis);
	}

	@AfterEach
	void tearDown() throws InterruptedException {
		for (RecurringChild child : this.children) {
			child.close();
		}
		this.fixture.close();
	}

	@Test
	void threeInstancesCreateOneOccurrencePerTickAndTheTimerOwnersCrashLosesNone() throws Exception {
		String[] schedule = { "delayed-tasks.recurring.every-second.queue=" + QUEUE,
				"delayed-tasks.recurring.every-second.fixed-rate=1s",
				"delayed-tasks.recurring.every-second.misfire-threshold=5s" };
		List<RecurringChild> instances = new ArrayList<>();
		for (int i = 1; i <= 3; i++) {
			instances.add(start("instance-" + i, schedule));
		}
		instances.forEach(RecurringChild::awaitReady);
		long from = System.currentTimeMillis();
		Thread.sleep(15_000);
		// Kill the owner just before a tick, so that tick comes due with no timer owner.
		Thread.sleep(1000 - System.currentTimeMillis() % 1000 + 800);
		String owner = this.fixture.redis.opsForValue().get(this.fixture.keys(QUEUE).timer());
		assertThat(owner).as("a timer owner").isNotNull();
		RecurringChild killed = instances.stream()
			.filter((child) -> owner.startsWith(child.pid() + "-"))
			.findFirst()
			.orElseThrow();
		long killedAt = System.currentTimeMillis();
		killed.kill();
		Thread.sleep(15_000);
		// Ticks of the last second may still be in flight when the schedule is paused.
		long to = System.currentTimeMillis() - 1000;
		this.fixture.recurring.pause("every-second");
		Thread.sleep(3_000);

		List<Ran> runs = instances.stream()
			.flatMap((child) -> child.runs().stream())
			.filter((run) -> run.schedule().equals("every-second"))
			.toList();
		TreeMap<Long, List<Ran>> byTick = runs.stream()
			.filter((run) -> run.tick() >= from && run.tick() <= to)
			.collect(Collectors.groupingBy(Ran::tick, TreeMap::new, Collectors.toList()));
		List<Long> expected = new ArrayList<>();
		for (long tick = (from / 1000 + 1) * 1000; tick <= to; tick += 1000) {
			expected.add(tick);
		}
		assertThat(byTick.keySet()).as("every tick of the %s s ran", expected.size())
			.containsExactlyElementsOf(expected);
		List<Long> doubled = byTick.entrySet()
			.stream()
			.filter((entry) -> entry.getValue().size() > 1)
			.map(Map.Entry::getKey)
			.toList();
		// At least once: only an occurrence the killed instance was running when it died
		// may run again (redelivered after its lease); no tick gets a second occurrence.
		for (long tick : doubled) {
			assertThat(byTick.get(tick)).as("runs of tick %s", tick)
				.anySatisfy((run) -> assertThat(run.instance()).isEqualTo(killed.toString()))
				.anySatisfy((run) -> assertThat(run.delivery()).isGreaterThan(1));
		}
		assertThat(doubled).hasSizeLessThanOrEqualTo(1);
		RecurringScheduleInfo info = this.fixture.recurring.find("every-second").orElseThrow();
		assertThat(info.missedTicks()).isZero();
		List<Long> lateness = byTick.values()
			.stream()
			.map((tickRuns) -> tickRuns.stream().min(Comparator.comparingLong(Ran::started)).orElseThrow())
			.map(Ran::lateness)
			.sorted()
			.toList();
		List<Long> latenessAwayFromKill = byTick.values()
			.stream()
			.map((tickRuns) -> tickRuns.get(0))
			.filter((run) -> run.tick() < killedAt || run.tick() > killedAt + 3000)
			.map(Ran::lateness)
			.sorted()
			.toList();
		System.out.println("recurring three-instance run: ticks=" + expected.size() + " occurrences_per_tick="
				+ byTick.values().stream().map(List::size).collect(Collectors.toSet()) + " doubled_runs="
				+ doubled.size() + " lateness_ms p50=" + percentile(lateness, 50) + " p99=" + percentile(lateness, 99)
				+ " max=" + lateness.get(lateness.size() - 1) + " lateness_ms_away_from_kill p50="
				+ percentile(latenessAwayFromKill, 50) + " p99=" + percentile(latenessAwayFromKill, 99) + " max="
				+ latenessAwayFromKill.get(latenessAwayFromKill.size() - 1) + " first_ticks_after_kill_lateness_ms="
				+ byTick.tailMap(killedAt)
					.values()
					.stream()
					.limit(3)
					.map((tickRuns) -> tickRuns.get(0).lateness())
					.toList()
				+ " by_instance="
				+ runs.stream().collect(Collectors.groupingBy(Ran::instance, TreeMap::new, Collectors.counting())));
		assertThat(lateness).as("no occurrence later than the timer takeover (TTL 1 s) and a margin")
			.allSatisfy((late) -> assertThat(late).isBetween(0L, 3000L));
		assertThat(percentile(latenessAwayFromKill, 50)).as("median lateness away from the kill").isLessThan(100L);
	}

	@Test
	void anOccurrenceRunningOnAnInstanceStoppedGracefullyRunsToTheEndOnAnother() throws Exception {
		occurrenceRunningOnAStoppedInstanceCompletesOnAnother("graceful", true);
	}

	@Test
	void anOccurrenceRunningOnAnInstanceKilledRunsToTheEndOnAnother() throws Exception {
		occurrenceRunningOnAStoppedInstanceCompletesOnAnother("killed", false);
	}

	private void occurrenceRunningOnAStoppedInstanceCompletesOnAnother(String name, boolean graceful) throws Exception {
		String id = "every-10s-" + name;
		String[] schedule = { "delayed-tasks.recurring." + id + ".queue=" + QUEUE,
				"delayed-tasks.recurring." + id + ".fixed-rate=10s",
				"delayed-tasks.recurring." + id + ".misfire-threshold=60s", "recurring-test.sleep-millis=5000",
				// Interrupted by the stop, the handler returns: the stop gives its run
				// back.
				"recurring-test.on-interrupt=return" };
		RecurringChild first = start(name + "-a", schedule).awaitReady();
		RecurringChild second = start(name + "-b", schedule).awaitReady();
		// The first tick that one of them starts.
		await().atMost(Duration.ofSeconds(30)).until(() -> !first.runs().isEmpty() || !second.runs().isEmpty());
		RecurringChild running = !first.runs().isEmpty() ? first : second;
		RecurringChild other = (running == first) ? second : first;
		Ran started = running.runs().get(0);
		String occurrence = started.schedule() + ":" + started.tick();
		if (graceful) {
			running.terminate();
		}
		else {
			running.kill();
		}
		// Handed back by a graceful stop (a first delivery again, which the occurrence
		// gate
		// admits once more); reaped after lease and grace after a kill.
		assertThat(running.done()).as("the stopped instance did not finish it").doesNotContain(occurrence);
		// Lease 2 s and grace 500 ms after a kill; at once after a graceful stop.
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(other.done()).contains(occurrence));
		assertThat(other.runs()).filteredOn((run) -> run.tick() == started.tick()).hasSize(1);
		assertThat(this.fixture.recurring.find(id).orElseThrow().missedTicks()).as("no tick counted missed").isZero();
	}

	@Test
	void aRestartAfterAGapAppliesEachMisfirePolicy() throws Exception {
		String[] schedules = { "delayed-tasks.recurring.gap-skip.queue=" + QUEUE,
				"delayed-tasks.recurring.gap-skip.fixed-rate=1s",
				"delayed-tasks.recurring.gap-skip.misfire-threshold=2s",
				"delayed-tasks.recurring.gap-once.queue=" + QUEUE, "delayed-tasks.recurring.gap-once.fixed-rate=1s",
				"delayed-tasks.recurring.gap-once.misfire-threshold=2s",
				"delayed-tasks.recurring.gap-once.misfire=run-once", "delayed-tasks.recurring.gap-all.queue=" + QUEUE,
				"delayed-tasks.recurring.gap-all.fixed-rate=1s", "delayed-tasks.recurring.gap-all.misfire-threshold=2s",
				"delayed-tasks.recurring.gap-all.misfire=run-all", "delayed-tasks.recurring.gap-all.misfire-bound=3" };
		RecurringChild before = start("before-gap", schedules).awaitReady();
		Thread.sleep(3_000);
		before.kill();
		long stoppedAt = System.currentTimeMillis();
		Thread.sleep(10_000);
		RecurringChild after = start("after-gap", schedules).awaitReady();
		Thread.sleep(4_000);
		Map<String, Integer> lateRuns = new TreeMap<>();
		Map<String, Long> missed = new TreeMap<>();
		for (String id : List.of("gap-skip", "gap-once", "gap-all")) {
			// The instance logs the Redis time before which it found ticks missed.
			long edge = after.misfireEdge(id);
			assertThat(edge).as("%s: missed ticks found and logged", id).isGreaterThan(stoppedAt);
			lateRuns.put(id,
					(int) after.runs()
						.stream()
						.filter((run) -> run.schedule().equals(id) && run.tick() > stoppedAt && run.tick() < edge)
						.count());
			missed.put(id, this.fixture.recurring.find(id).orElseThrow().missedTicks());
		}
		System.out.println("recurring 10 s gap: late runs per schedule=" + lateRuns + " missed ticks=" + missed);
		assertThat(lateRuns.get("gap-skip")).as("skip runs no missed tick").isZero();
		assertThat(lateRuns.get("gap-once")).as("run-once runs one occurrence for all missed ticks").isOne();
		assertThat(lateRuns.get("gap-all")).as("run-all runs the latest missed ticks up to its bound").isEqualTo(3);
		assertThat(missed.get("gap-skip")).isGreaterThanOrEqualTo(9);
		assertThat(missed.get("gap-once")).isGreaterThanOrEqualTo(8);
		assertThat(missed.get("gap-all")).isGreaterThanOrEqualTo(6);
		long restartedAt = System.currentTimeMillis() - 4_000;
		for (String id : List.of("gap-skip", "gap-once", "gap-all")) {
			List<Long> onTime = after.runs()
				.stream()
				.filter((run) -> run.schedule().equals(id) && run.tick() > restartedAt)
				.map(Ran::tick)
				.toList();
			assertThat(onTime).as("%s carries on every second once restarted", id).isNotEmpty();
		}
	}

	@Test
	void aCronChangedBetweenRestartsTakesEffectFromItsNextTick() throws Exception {
		RecurringChild first = start("every-2s", "delayed-tasks.recurring.changing.queue=" + QUEUE,
				"delayed-tasks.recurring.changing.cron=*/2 * * * * *")
			.awaitReady();
		Thread.sleep(5_000);
		first.kill();
		long stoppedAt = System.currentTimeMillis();
		RecurringChild second = start("every-3s", "delayed-tasks.recurring.changing.queue=" + QUEUE,
				"delayed-tasks.recurring.changing.cron=*/3 * * * * *")
			.awaitReady();
		long restartedAt = System.currentTimeMillis();
		Thread.sleep(7_000);
		List<Ran> firstRuns = first.runs();
		List<Ran> secondRuns = second.runs();
		assertThat(firstRuns).isNotEmpty().allSatisfy((run) -> assertThat(run.tick() % 2000).isZero());
		List<Ran> newTicks = secondRuns.stream().filter((run) -> run.tick() > restartedAt).toList();
		assertThat(newTicks).hasSizeGreaterThanOrEqualTo(2).allSatisfy((run) -> assertThat(run.tick() % 3000).isZero());
		List<Long> ticks = secondRuns.stream().map(Ran::tick).toList();
		assertThat(ticks).as("no tick twice").doesNotHaveDuplicates();
		// Ticks of the old cron created before the change and not yet due are skipped;
		// one already due when the definition changed still runs (once, above).
		assertThat(secondRuns).as("no tick of the old cron due after the change")
			.filteredOn((run) -> run.tick() > restartedAt)
			.allSatisfy((run) -> assertThat(run.tick() % 3000).isZero());
		assertThat(stoppedAt).isLessThan(restartedAt);
		assertThat(this.fixture.recurring.find("changing").orElseThrow().expression()).isEqualTo("*/3 * * * * *");
	}

	private RecurringChild start(String name, String... properties) throws Exception {
		RecurringChild child = RecurringChild.launch(name, this.redis, QUEUE, properties);
		this.children.add(child);
		return child;
	}

	private static long percentile(List<Long> sorted, int percent) {
		if (sorted.isEmpty()) {
			return -1;
		}
		int index = (int) Math.ceil(percent / 100.0 * sorted.size()) - 1;
		return sorted.get(Math.max(0, Math.min(index, sorted.size() - 1)));
	}

}

package dev.delayedtasks.internal.store;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.QueueRemoval;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * "Priorities" (docs/flow-control.md) at the store: the scripts called directly on real
 * Redis, against the promises that a claim takes the highest priority first and FIFO
 * within one, that a task keeps its priority whenever it goes back to ready, that nothing
 * of an earlier incarnation of an id leaks into the next, that a queue that never used a
 * priority reads no more keys per claim, and that the statistics and the window chunking
 * hold with priorities.
 */
@WithRedis
class PriorityStoreIntegrationTests {

	private StoreFixture fixture;

	private TestRedis testRedis;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.testRedis = redis;
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	private TaskId schedule(String queue, String id, int priority) {
		return this.fixture.scheduler.schedule(TaskRequest.of(queue, "job " + id).id(id).priority(priority));
	}

	private List<ClaimedTask> claim(String queue, int n, String nonce) {
		return this.fixture.store.claim(queue, n, nonce).tasks();
	}

	private List<String> claimIds(String queue, int n, String nonce) {
		return claim(queue, n, nonce).stream().map((task) -> task.id().value()).toList();
	}

	/**
	 * The same id again: a ready task of priority 10 is cancelled and its id created
	 * again at priority -10. The new incarnation must wait behind the priority-0 backlog
	 * ("strict"; "nothing of an earlier incarnation may leak into the next"). The hint
	 * the cancel left in {@code ready:10} points at the new task hash, which is ready, so
	 * the claim takes it from priority 10's list.
	 */
	@Test
	void anIdCancelledWhileReadyAndCreatedAgainAtALowerPriorityWaitsBehindHigherPriorities() {
		String queue = "prio-same-id";
		schedule(queue, "again", 10);
		assertThat(this.fixture.scheduler.cancel(queue, TaskId.of("again"))).isTrue();
		schedule(queue, "zero-1", 0);
		schedule(queue, "zero-2", 0);
		schedule(queue, "again", -10);
		assertThat(this.fixture.scheduler.find(queue, TaskId.of("again"))).hasValueSatisfying(
				(info) -> assertThat(info.priority()).as("the new incarnation's priority").isEqualTo(-10));
		assertThat(claimIds(queue, 10, "n1")).as("claim order").containsExactly("zero-1", "zero-2", "again");
	}

	/**
	 * The reverse: created again at a higher priority, it goes first (its new hint is in
	 * the higher list).
	 */
	@Test
	void anIdCancelledWhileReadyAndCreatedAgainAtAHigherPriorityGoesFirst() {
		String queue = "prio-same-id-up";
		schedule(queue, "again", -10);
		assertThat(this.fixture.scheduler.cancel(queue, TaskId.of("again"))).isTrue();
		schedule(queue, "zero-1", 0);
		schedule(queue, "again", 10);
		assertThat(claimIds(queue, 10, "n1")).as("claim order").containsExactly("again", "zero-1");
		RedisQueueStats stats = new RedisQueueStats(this.fixture.scripts, this.fixture.settings);
		assertThat(stats.read(queue).ready()).as("ready after the claim (ghost hint left in ready:-10)").isZero();
	}

	/**
	 * Created again at the same priority, after others: its earlier incarnation's hint is
	 * still ahead of theirs in the list, and the new task waits behind them all the same
	 * (the tombstone passes on the count of hints left behind, {@code gh}).
	 */
	@Test
	void anIdCancelledWhileReadyAndCreatedAgainAtTheSamePriorityJoinsTheTail() {
		String queue = "prio-same-id-same";
		schedule(queue, "again", 3);
		assertThat(this.fixture.scheduler.cancel(queue, TaskId.of("again"))).isTrue();
		schedule(queue, "first", 3);
		schedule(queue, "again", 3);
		schedule(queue, "last", 3);
		assertThat(claimIds(queue, 10, "n1")).as("claim order").containsExactly("first", "again", "last");
		RedisQueueStats stats = new RedisQueueStats(this.fixture.scripts, this.fixture.settings);
		assertThat(stats.read(queue).ready()).as("ready after the claim").isZero();
		assertThat(this.fixture.redis.opsForHash().get(this.fixture.keys(queue).task("again"), "gh")).isNull();
	}

	/**
	 * A queue removed while a cancelled task's tombstone still counts the hint it left:
	 * the hint goes with the queue's lists, and a task created again with the id is
	 * claimed from its own hint.
	 */
	@Test
	void anIdCreatedAgainAfterItsQueueWasRemovedIsClaimed() {
		String queue = "prio-removed";
		schedule(queue, "again", 2);
		assertThat(this.fixture.scheduler.cancel(queue, TaskId.of("again"))).isTrue();
		assertThat(this.fixture.control.remove(queue).outcome()).isEqualTo(QueueRemoval.Outcome.REMOVED);
		schedule(queue, "again", 2);
		assertThat(claimIds(queue, 10, "n1")).containsExactly("again");
	}

	/**
	 * Rescheduled to later twice while ready, due again between: each hint it left is
	 * skipped, and it runs once, in its turn.
	 */
	@Test
	void aTaskThatLeftSeveralHintsBehindRunsOnceInItsTurn() throws InterruptedException {
		String queue = "prio-resched-twice";
		schedule(queue, "x", 0);
		assertThat(this.fixture.scheduler.reschedule(queue, TaskId.of("x"), Duration.ofMillis(100))).isTrue();
		assertThat(this.fixture.scheduler.reschedule(queue, TaskId.of("x"), Duration.ofMillis(150))).isTrue();
		Thread.sleep(250);
		schedule(queue, "y", 0);
		assertThat(claimIds(queue, 10, "n1")).as("claim order").containsExactly("y", "x");
		assertThat(claimIds(queue, 10, "n2")).isEmpty();
	}

	/**
	 * Graceful stop versus crash, FIFO within one priority: tasks claimed together and
	 * given back together (a graceful stop, a stopped loop's claim) go back "at the head
	 * of its priority", in the order they were claimed in.
	 */
	@Test
	void tasksReleasedTogetherComeBackInTheOrderTheyWereClaimed() {
		String queue = "prio-release-order";
		// Ids in reverse lexical order, so no order of Redis's own (ZSET ties) helps.
		for (String id : new String[] { "c1", "b2", "a3", "d4" }) {
			schedule(queue, id, 5);
		}
		List<ClaimedTask> claimed = claim(queue, 3, "n1");
		assertThat(claimed).extracting((task) -> task.id().value()).containsExactly("c1", "b2", "a3");
		this.fixture.store.release(queue, claimed.stream().map(ClaimedTask::lease).toList());
		assertThat(claimIds(queue, 10, "n2")).as("claim order after the release")
			.containsExactly("c1", "b2", "a3", "d4");
	}

	/**
	 * A reschedule of a ready task to later, then due again: "once due it joins its
	 * priority's line" (at its tail), behind the tasks that became ready meanwhile. The
	 * hint reschedule.lua left at the task's old place in {@code ready:5} is skipped (the
	 * task's {@code gh}).
	 */
	@Test
	void aReadyTaskRescheduledToLaterJoinsTheTailOfItsPriorityWhenDue() throws InterruptedException {
		String queue = "prio-resched";
		schedule(queue, "x", 5);
		schedule(queue, "y", 5);
		assertThat(this.fixture.scheduler.reschedule(queue, TaskId.of("x"), Duration.ofMillis(200))).isTrue();
		Thread.sleep(300);
		// Due now: a claim promotes x to the tail of ready:5, after z.
		schedule(queue, "z", 5);
		assertThat(claimIds(queue, 10, "n1")).as("claim order").containsExactly("y", "z", "x");
	}

	/**
	 * One bad item among good ones, in a priority's list: a hint whose task key is not a
	 * hash and a hint that is not a valid id are parked in dead, and the good tasks of
	 * that priority and below are claimed in the same call.
	 */
	@Test
	void corruptHintsInAPriorityListBlockNobody() {
		String queue = "prio-corrupt";
		PartitionKeys keys = this.fixture.keys(queue);
		schedule(queue, "good-1", 3);
		this.fixture.redis.opsForValue().set(keys.task("broken"), "not a hash");
		this.fixture.redis.opsForList().rightPush(keys.base() + "ready:3", "broken");
		this.fixture.redis.opsForList().rightPush(keys.base() + "ready:3", "bad id!");
		this.fixture.redis.opsForHash().put(keys.task("bad id!"), "s", "R");
		schedule(queue, "good-2", 3);
		schedule(queue, "zero", 0);
		assertThat(claimIds(queue, 10, "n1")).containsExactly("good-1", "good-2", "zero");
		assertThat(this.fixture.redis.opsForZSet().range(keys.dead(), 0, -1)).contains("broken", "bad id!");
	}

	/**
	 * "A costly task at the head of the highest priority waits for room in the rate
	 * window, and the tasks behind it wait too, lower priorities included": with 5 of 10
	 * starts used, a task of cost 8 at priority 5 holds back a cheap priority-0 task, and
	 * the claim answers when the window has room for 8.
	 */
	@Test
	void aCostlyTaskAtTheHeadOfAHighPriorityHoldsBackCheaperLowerOnes() {
		String queue = "prio-costly";
		this.fixture.control.setLimits(queue, new QueueLimits(RateLimit.parse("10/1s"), null, null));
		for (int i = 0; i < 5; i++) {
			schedule(queue, "warm-" + i, 0);
		}
		assertThat(claimIds(queue, 10, "n1")).hasSize(5);
		this.fixture.scheduler.schedule(TaskRequest.of(queue, "big").id("big").cost(8).priority(5));
		schedule(queue, "cheap", 0);
		ClaimBatch held = this.fixture.store.claim(queue, 10, "n2");
		assertThat(held.tasks()).as("leased while the costly task waits").isEmpty();
		assertThat(held.throttledUntilMs()).as("throttled until").isGreaterThan(held.now());
		List<String> next = new ArrayList<>();
		await().atMost(3, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(20)).until(() -> {
			next.addAll(claimIds(queue, 10, "n3-" + System.nanoTime()));
			return !next.isEmpty();
		});
		assertThat(next).as("first claim with room").containsExactly("big", "cheap");
	}

	/**
	 * Kept through a retry at once: fail.lua with no delay puts the task at the tail of
	 * its own priority, before the lower priorities.
	 */
	@Test
	void aRetryAtOnceGoesToTheTailOfItsPriorityAheadOfLowerOnes() {
		String queue = "prio-retry";
		schedule(queue, "hi-1", 3);
		schedule(queue, "hi-2", 3);
		schedule(queue, "lo", -3);
		schedule(queue, "zero", 0);
		List<ClaimedTask> first = claim(queue, 1, "n1");
		assertThat(first).extracting((task) -> task.id().value()).containsExactly("hi-1");
		this.fixture.store.fail(queue, first.get(0).lease(),
				new TaskFailure(Duration.ZERO, FailureReason.RETRIES_EXHAUSTED, "x.Boom", "boom"));
		assertThat(claimIds(queue, 10, "n2")).containsExactly("hi-2", "hi-1", "zero", "lo");
	}

	/**
	 * Statistics with priorities: a cancelled task at the head of {@code ready:5} (a
	 * ghost) is not ready and not the oldest; the oldest ready task is the earliest of
	 * every priority's head.
	 */
	@Test
	void statsCountGhostsOfEveryPriorityAndTakeTheOldestAcrossPriorities() throws InterruptedException {
		String queue = "prio-stats";
		schedule(queue, "ghost", 5);
		Thread.sleep(20);
		schedule(queue, "old-low", -3);
		Thread.sleep(50);
		schedule(queue, "new-zero", 0);
		schedule(queue, "new-high", 5);
		assertThat(this.fixture.scheduler.cancel(queue, TaskId.of("ghost"))).isTrue();
		RedisQueueStats stats = new RedisQueueStats(this.fixture.scripts, this.fixture.settings);
		QueueStats read = stats.read(queue);
		long oldLowDue = this.fixture.scheduler.find(queue, TaskId.of("old-low")).orElseThrow().dueAt().toEpochMilli();
		assertThat(read.ready()).isEqualTo(3);
		assertThat(read.oldestReadyDueMs()).as("oldest ready due").isEqualTo(oldLowDue);
		assertThat(claimIds(queue, 10, "n1")).containsExactly("new-high", "new-zero", "old-low");
		read = stats.read(queue);
		assertThat(read.ready()).isZero();
		assertThat(read.oldestReadyDueMs()).isEqualTo(-1);
	}

	/**
	 * Memory: a level whose list held only ghost hints leaves {@code levels} and its list
	 * goes, once a claim has passed it.
	 */
	@Test
	void aLevelEmptiedByGhostHintsOnlyLeavesLevelsAndItsListGoes() {
		String queue = "prio-ghost-level";
		PartitionKeys keys = this.fixture.keys(queue);
		for (int i = 0; i < 5; i++) {
			schedule(queue, "g" + i, 7);
			assertThat(this.fixture.scheduler.cancel(queue, TaskId.of("g" + i))).isTrue();
		}
		schedule(queue, "zero", 0);
		assertThat(claimIds(queue, 10, "n1")).containsExactly("zero");
		claimIds(queue, 10, "n2");
		assertThat(this.fixture.redis.hasKey(keys.base() + "ready:7")).isFalse();
		assertThat(this.fixture.redis.opsForZSet().zCard(keys.base() + "levels")).isZero();
		assertThat(this.fixture.redis.opsForHash().get(keys.stats(), "ghost")).isIn(null, "0");
	}

	/**
	 * No overtaking by a hand-off: a {@code schedule} call's hand-off (enqueue.lua's ARGV
	 * 5) must not lease its task while a task of another priority waits.
	 */
	@Test
	void aHandOffDoesNotOvertakeATaskWaitingAtAnotherPriority() {
		String queue = "prio-handoff";
		schedule(queue, "waiting-low", -4);
		PartitionKeys keys = this.fixture.keys(queue);
		String id = "handed";
		List<String> scriptKeys = List.of(keys.sched(), keys.ready(), keys.wake(), keys.tick(), keys.stats(),
				keys.meta(), keys.task(id), keys.payload(id), keys.unique(null));
		@SuppressWarnings("rawtypes")
		RedisScript<List> enqueue = RedisScript.of(StoreScripts.source(Script.ENQUEUE), List.class);
		List<?> reply = this.fixture.redis.execute(enqueue, scriptKeys, keys.base(), "1", LayoutVersion.CURRENT, "16",
				"nonce-h1 1 30000 0", id, "D", "0", "3", "0", "0", "0", "{\"h\":{},\"b\":\"x\"}", "", "", "9");
		assertThat(reply).as("enqueue reply").isNotNull();
		assertThat(reply.get(2)).as("code of the created task").isEqualTo("C");
		assertThat(claimIds(queue, 10, "n1")).containsExactly("handed", "waiting-low");
	}

	/**
	 * Window chunking near the limits, for the queue's window and a key's together:
	 * {@code rate-limit 10000/1h} and {@code key-rate-limit 10000/1h} with tasks of cost
	 * 1,000 of one key: one claim leases ten (10,000 entries in each window, every ZADD
	 * at most 500) and the eleventh waits.
	 */
	@Test
	void costlyTasksFillBothWindowsToTheirCountInOneClaim() {
		String queue = "prio-chunks";
		this.fixture.control.setLimits(queue,
				new QueueLimits(RateLimit.parse("10000/1h"), null, RateLimit.parse("10000/1h")));
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 11; i++) {
			requests.add(TaskRequest.of(queue, "job " + i).cost(1000).rateKey("k").priority((i < 5) ? 2 : 0));
		}
		this.fixture.scheduler.scheduleAll(requests);
		ClaimBatch batch = this.fixture.store.claim(queue, 20, "n1");
		PartitionKeys keys = this.fixture.keys(queue);
		assertThat(batch.tasks()).hasSize(10);
		assertThat(this.fixture.redis.opsForZSet().zCard(keys.base() + "starts")).isEqualTo(10_000);
		assertThat(this.fixture.redis.opsForZSet().zCard(keys.base() + "ks:k")).isEqualTo(10_000);
	}

	/**
	 * The hot path: a queue that never had a task of another priority ready reads no more
	 * keys per claim than before: no {@code levels}, no {@code ready:
	 *
	<p>
	 * }, and {@code meta} read in one HMGET (flow control's) plus the {@code paused}
	 * read. Watched with MONITOR, which shows the commands scripts run. A queue that used
	 * a priority reads {@code levels} once per claim.
	 */
	@Test
	void aQueueThatNeverUsedAPriorityReadsNoPriorityKeyPerClaim() throws Exception {
		String plain = "prio-hot-plain";
		String used = "prio-hot-used";
		for (int i = 0; i < 5; i++) {
			schedule(plain, "p" + i, 0);
			schedule(used, "u" + i, 0);
		}
		schedule(used, "hi", 1);
		claimIds(used, 1, "warm");
		try (Monitor monitor = new Monitor(this.testRedis)) {
			for (int i = 0; i < 5; i++) {
				claimIds(plain, 1, "c" + i);
				claimIds(used, 1, "u" + i);
			}
			List<String> plainLines = monitor.linesOf(this.fixture, this.fixture.keys(plain).base());
			List<String> usedLines = monitor.linesOf(this.fixture, this.fixture.keys(used).base());
			assertThat(plainLines).as("commands of the plain queue's claims").isNotEmpty();
			assertThat(plainLines).noneMatch((line) -> line.contains("levels") || line.contains("ready:"));
			assertThat(plainLines.stream().filter((line) -> line.contains("\"HMGET\"") && line.contains("meta")))
				.as("meta HMGETs in 5 claims")
				.hasSize(5);
			long plainCommands = plainLines.stream().filter((line) -> line.contains("lua]")).count();
			long usedCommands = usedLines.stream().filter((line) -> line.contains("lua]")).count();
			assertThat(usedLines.stream().filter((line) -> line.contains("\"ZREVRANGE\"") && line.contains("levels")))
				.as("levels reads of the queue that used a priority")
				.hasSize(5);
			System.out
				.println("[priorities] commands inside 5 claims: plain " + plainCommands + ", used " + usedCommands);
			plainLines.stream().limit(40).forEach((line) -> System.out.println("[priorities] plain " + line));
		}
	}

	/** A MONITOR connection that records what Redis runs, scripts' commands included. */
	static final class Monitor implements AutoCloseable {

		private final Socket socket;

		private final List<String> lines = new CopyOnWriteArrayList<>();

		private final Thread reader;

		Monitor(TestRedis redis) throws Exception {
			this.socket = new Socket(redis.host(), redis.port());
			OutputStream out = this.socket.getOutputStream();
			out.write("*1\r\n$7\r\nMONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			BufferedReader in = new BufferedReader(
					new InputStreamReader(this.socket.getInputStream(), StandardCharsets.UTF_8));
			String ok = in.readLine();
			assertThat(ok).isEqualTo("+OK");
			this.reader = new Thread(() -> {
				try {
					String line;
					while ((line = in.readLine()) != null) {
						this.lines.add(line);
					}
				}
				catch (Exception ex) {
					// closed
				}
			}, "prio-monitor");
			this.reader.setDaemon(true);
			this.reader.start();
		}

		/** The lines naming a key under base, once a marker sent after them is seen. */
		List<String> linesOf(StoreFixture fixture, String base) {
			String marker = base + "marker-" + System.nanoTime();
			fixture.redis.hasKey(marker);
			await().atMost(5, TimeUnit.SECONDS).until(() -> this.lines.stream().anyMatch((l) -> l.contains(marker)));
			return this.lines.stream().filter((l) -> l.contains(base) && !l.contains("marker-")).toList();
		}

		@Override
		public void close() throws Exception {
			this.socket.close();
		}

	}

}

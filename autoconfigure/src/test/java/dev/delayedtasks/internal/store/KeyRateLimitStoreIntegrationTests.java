package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "Rate limit per key" (docs/flow-control.md) at the store: claims, cancels, reschedules
 * and releases called directly, in real Redis time, against exactness, order within a
 * key, head-of-line blocking, memory and bad data.
 */
@WithRedis
class KeyRateLimitStoreIntegrationTests {

	private StoreFixture fixture;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	private List<TaskId> schedule(String queue, String key, int count) {
		List<TaskId> ids = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			ids.add(this.fixture.scheduler.schedule(TaskRequest.of(queue, "job " + i).rateKey(key)));
		}
		return ids;
	}

	private List<TaskId> claimIds(String queue, String nonce) {
		return this.fixture.store.claim(queue, 50, nonce).tasks().stream().map(ClaimedTask::id).toList();
	}

	private void keyLimit(String queue, String limit) {
		this.fixture.control.setLimits(queue, new QueueLimits(null, null, RateLimit.parse(limit)));
	}

	/**
	 * "In order within a key": a set-aside task rescheduled to now joins its key's line
	 * like any task of the key (reschedule drops kw), and does not overtake the tasks
	 * ahead of it.
	 */
	@Test
	void aSetAsideTaskRescheduledToNowDoesNotJumpItsKeysLine() throws InterruptedException {
		String queue = "review-resched";
		keyLimit(queue, "2/1s");
		List<TaskId> ids = schedule(queue, "k", 6);
		assertThat(claimIds(queue, "n1")).containsExactly(ids.get(0), ids.get(1));
		// 2..5 set aside at about +1000, +1500, +2000, +2500 ms.
		Thread.sleep(1100);
		assertThat(claimIds(queue, "n2")).containsExactly(ids.get(2));
		assertThat(this.fixture.scheduler.reschedule(queue, ids.get(5), Duration.ZERO)).isTrue();
		assertThat(claimIds(queue, "n3")).as("task 5, rescheduled to now, ahead of tasks 3 and 4")
			.doesNotContain(ids.get(5));
	}

	/**
	 * A keyed task given back (a handler's RateLimitedException, or a graceful stop)
	 * "runs first, as the same attempt, when the hold ends", ahead of its key's line
	 * (release sets kw).
	 */
	@Test
	void aKeyedTaskGivenBackRunsBeforeTheTasksOfItsKeySetAsideAfterIt() throws InterruptedException {
		String queue = "review-release";
		keyLimit(queue, "1/200ms");
		List<TaskId> ids = schedule(queue, "k", 4);
		List<ClaimedTask> first = this.fixture.store.claim(queue, 50, "n1").tasks();
		assertThat(first).singleElement().satisfies((task) -> assertThat(task.id()).isEqualTo(ids.get(0)));
		this.fixture.store.release(queue, List.of(first.get(0).lease()), Duration.ofMillis(50));
		List<TaskId> order = new ArrayList<>();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
		while (order.size() < 4 && System.nanoTime() < deadline) {
			order.addAll(claimIds(queue, "n" + order.size() + System.nanoTime()));
			Thread.sleep(20);
		}
		assertThat(order).as("lease order after the give-back").hasSize(4).first().isEqualTo(ids.get(0));
	}

	/**
	 * Exact per key across instances: concurrent claims never exceed count in a window.
	 */
	@Test
	void concurrentClaimsNeverExceedTheKeyLimitInAnyWindow() throws Exception {
		String queue = "review-exact";
		keyLimit(queue, "3/300ms");
		for (int i = 0; i < 30; i++) {
			this.fixture.scheduler.schedule(TaskRequest.of(queue, "job " + i).rateKey((i % 2 == 0) ? "a" : "b"));
		}
		Map<String, List<Long>> starts = new ConcurrentHashMap<>();
		List<Throwable> errors = new CopyOnWriteArrayList<>();
		ExecutorService pool = Executors.newFixedThreadPool(3);
		for (int t = 0; t < 3; t++) {
			int thread = t;
			pool.execute(() -> {
				try {
					long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
					int n = 0;
					while (System.nanoTime() < end) {
						ClaimBatch batch = this.fixture.store.claim(queue, 5, "t" + thread + "-" + n++);
						for (ClaimedTask task : batch.tasks()) {
							String key = (Integer.parseInt(task.envelope().replaceAll("[^0-9]", "")) % 2 == 0) ? "a"
									: "b";
							starts.computeIfAbsent(key, (k) -> new CopyOnWriteArrayList<>()).add(batch.now());
						}
						if (!batch.tasks().isEmpty()) {
							this.fixture.store.ack(queue, batch.tasks().stream().map(ClaimedTask::lease).toList());
						}
						Thread.sleep(5);
					}
				}
				catch (Throwable ex) {
					errors.add(ex);
				}
			});
		}
		pool.shutdown();
		assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
		assertThat(errors).isEmpty();
		assertThat(starts.values().stream().mapToInt(List::size).sum()).isEqualTo(30);
		for (List<Long> key : starts.values()) {
			List<Long> sorted = new ArrayList<>(key);
			Collections.sort(sorted);
			for (int i = 3; i < sorted.size(); i++) {
				assertThat(sorted.get(i) - sorted.get(i - 3)).as("4 starts of a key within 300 ms").isGreaterThan(299);
			}
		}
	}

	/** One bad item: corrupt rk, fh and fl values neither block nor fail the others. */
	@Test
	void corruptRateKeyHoldAndLimitValuesLimitNothingAndBlockNobody() {
		String queue = "review-corrupt";
		keyLimit(queue, "1/10s");
		PartitionKeys keys = this.fixture.keys(queue);
		List<TaskId> ids = schedule(queue, "k", 3);
		this.fixture.redis.opsForHash().put(keys.task(ids.get(1).value()), "rk", "not a key!");
		this.fixture.redis.opsForHash().put(keys.task(ids.get(2).value()), "rk", "x".repeat(200));
		this.fixture.redis.opsForHash().put(keys.meta(), "fh", "soon");
		assertThat(claimIds(queue, "n1")).containsExactlyElementsOf(ids);
		for (String fl : new String[] { "0 0 0 5 0", "0 0 0 -1 1000", "1 2 3 4", "0 0 0 1e3 1000" }) {
			this.fixture.redis.opsForHash().put(keys.meta(), "fl", fl);
			List<TaskId> more = schedule(queue, "k", 2);
			assertThat(claimIds(queue, "n-" + fl.replace(' ', '_'))).as("fl '%s'", fl).containsExactlyElementsOf(more);
		}
	}

	/** Bounded memory per key: 20,000 keys leave nothing behind once idle. */
	@Test
	void manyDistinctKeysLeaveNothingBehindOnceIdle() throws InterruptedException {
		String queue = "review-memory";
		keyLimit(queue, "1/300ms");
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 20_000; i++) {
			requests.add(TaskRequest.of(queue, "j").rateKey("c-" + i));
			if (i % 10 == 0) {
				requests.add(TaskRequest.of(queue, "j").rateKey("c-" + i)); // a second
																			// one: set
																			// aside
			}
		}
		for (int from = 0; from < requests.size(); from += 500) {
			this.fixture.scheduler.scheduleAll(requests.subList(from, Math.min(from + 500, requests.size())));
		}
		int leased = 0;
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		while (leased < requests.size() && System.nanoTime() < deadline) {
			ClaimBatch batch = this.fixture.store.claim(queue, 1000, "m" + leased);
			if (!batch.tasks().isEmpty()) {
				this.fixture.store.ack(queue, batch.tasks().stream().map(ClaimedTask::lease).toList(),
						Collections.nCopies(batch.tasks().size(), null));
			}
			leased += batch.tasks().size();
			if (batch.tasks().isEmpty()) {
				Thread.sleep(50);
			}
		}
		assertThat(leased).isEqualTo(requests.size());
		Thread.sleep(500);
		String base = this.fixture.keys(queue).base();
		assertThat(this.fixture.redis.keys(base + "ks:*")).isEmpty();
		assertThat(this.fixture.redis.keys(base + "kp:*")).isEmpty();
	}

	/**
	 * The same id again: a caller-supplied id re-sent while its task is set aside is the
	 * existing task; once cancelled, a new incarnation carries nothing of the set-aside
	 * one (no kw that would let it skip its key's line).
	 */
	@Test
	void theSameIdAgainWhileSetAsideAndAfterItsCancelLeaksNothing() {
		String queue = "review-same-id";
		keyLimit(queue, "1/10s");
		schedule(queue, "k", 1);
		TaskId mine = this.fixture.scheduler.schedule(TaskRequest.of(queue, "mine").id("mine-1").rateKey("k"));
		assertThat(claimIds(queue, "n1")).hasSize(1);
		Map<Object, Object> aside = this.fixture.hash(queue, mine.value());
		assertThat(aside).containsEntry("s", "S").containsKey("kw");
		assertThat(this.fixture.scheduler.find(queue, mine))
			.hasValueSatisfying((info) -> assertThat(info.state()).isEqualTo(TaskState.SCHEDULED));
		assertThat(this.fixture.scheduler.submit(TaskRequest.of(queue, "again").id("mine-1").rateKey("k")).id())
			.isEqualTo(mine);
		assertThat(this.fixture.hash(queue, mine.value())).isEqualTo(aside);
		assertThat(this.fixture.scheduler.cancel(queue, mine)).isTrue();
		this.fixture.scheduler.schedule(TaskRequest.of(queue, "new").id("mine-1").rateKey("k"));
		assertThat(this.fixture.hash(queue, mine.value())).doesNotContainKey("kw").containsEntry("s", "R");
		assertThat(claimIds(queue, "n2")).as("the new incarnation waits for its key").isEmpty();
		assertThat(this.fixture.hash(queue, mine.value())).containsEntry("s", "S");
	}

	/** A failed run of a keyed task (fail.lua) retried at once joins its key's line. */
	@Test
	void aRetryOfAKeyedTaskCountsAndWaitsForItsKey() {
		String queue = "review-retry";
		keyLimit(queue, "1/10s");
		List<TaskId> ids = schedule(queue, "k", 1);
		ClaimedTask task = this.fixture.store.claim(queue, 5, "n1").tasks().get(0);
		this.fixture.store.fail(queue, task.lease(),
				TaskFailure.of(Duration.ZERO, FailureReason.RETRIES_EXHAUSTED, new IllegalStateException("boom")));
		assertThat(claimIds(queue, "n2")).as("the retry within the key's window").isEmpty();
		assertThat(this.fixture.hash(queue, ids.get(0).value())).containsEntry("s", "S").containsKey("kw");
	}

	/** A paused queue sets nothing aside; resumed, the key's tasks keep their order. */
	@Test
	void aPausedQueueLeasesNothingAndKeepsTheKeysOrderOnResume() throws InterruptedException {
		String queue = "review-paused";
		keyLimit(queue, "1/200ms");
		List<TaskId> ids = schedule(queue, "k", 4);
		assertThat(claimIds(queue, "n0")).containsExactly(ids.get(0));
		this.fixture.control.pause(queue);
		Thread.sleep(800); // every set-aside instant passes while paused
		assertThat(claimIds(queue, "n1")).isEmpty();
		this.fixture.control.resume(queue);
		List<TaskId> order = new ArrayList<>();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
		while (order.size() < 3 && System.nanoTime() < deadline) {
			order.addAll(claimIds(queue, "r" + System.nanoTime()));
			Thread.sleep(20);
		}
		// Brought back together after the pause, they find the window full in turn and
		// are given instants 1 ms apart at least: their order holds.
		assertThat(order).containsExactly(ids.get(1), ids.get(2), ids.get(3));
	}

	/**
	 * "No head-of-line blocking ... a backlog of one key never delays the tasks of other
	 * keys": one claimer (a dispatcher with 8 free slots, scan limit 8 + 64) in front of
	 * a bulk backlog of one key.
	 */
	@Test
	void aLargeBacklogOfOneKeyDoesNotDelayAnotherKeysTasks() {
		String queue = "review-hol";
		keyLimit(queue, "10/1s");
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 30_000; i++) {
			requests.add(TaskRequest.of(queue, "hot").rateKey("hot"));
		}
		for (int from = 0; from < requests.size(); from += 1000) {
			this.fixture.scheduler.scheduleAll(requests.subList(from, from + 1000));
		}
		TaskId cold = this.fixture.scheduler.schedule(TaskRequest.of(queue, "cold").rateKey("cold"));
		long started = System.nanoTime();
		int claims = 0;
		boolean found = false;
		while (!found && System.nanoTime() - started < TimeUnit.SECONDS.toNanos(60)) {
			ClaimBatch batch = this.fixture.store.claim(queue, 8, "h" + claims++);
			found = batch.tasks().stream().anyMatch((task) -> task.id().equals(cold));
		}
		long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
		assertThat(found).isTrue();
		assertThat(ms).as("ms (%d claims) until the other key's task was leased", claims).isLessThan(1500);
	}

}

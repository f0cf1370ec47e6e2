package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.internal.store.TaskStore.AckOutcome;
import dev.delayedtasks.internal.store.TaskStore.ExtendOutcome;
import dev.delayedtasks.internal.store.TaskStore.FailOutcome;
import dev.delayedtasks.internal.store.TaskStore.ReleaseOutcome;
import dev.delayedtasks.test.TestRedis;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Many threads interleave every store operation on a few hundred tasks of two queues,
 * with a lease so short that reaping, stale acknowledgements and max-delivery dead
 * letters happen all the time. Each created task carries a serial number (its "life") in
 * a header, so that every outcome can be traced to the creation it belongs to even when
 * caller ids are reused. After the run the queues are drained and every life must have
 * ended in exactly one place: completed once, cancelled, or dead. Subclasses choose the
 * Redis.
 */
abstract class AbstractStoreFuzzIntegrationTests {

	private static final List<String> QUEUES = List.of("fuzz-a", "fuzz-b");

	private static final int THREADS = 8;

	/**
	 * At most this many created tasks that callers have not seen completed or cancelled.
	 */
	private static final int MAX_OUTSTANDING = 300;

	private static final Duration RUN = Duration.ofSeconds(4);

	private static final Duration LEASE = Duration.ofMillis(300);

	private static final Duration GRACE = Duration.ofMillis(100);

	private static final int MAX_DELIVERIES = 3;

	private static final Duration TIMER_TTL = Duration.ofMillis(100);

	/** Redis time of two scripts can differ by a millisecond from key expiry. */
	private static final long CLOCK_TOLERANCE_MS = 2;

	private static final String LIFE = "life";

	private StoreFixture fixture;

	private TestRedis testRedis;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.testRedis = redis;
		StoreSettings settings = new StoreSettings(redis.keyPrefix(), LEASE, GRACE, MAX_DELIVERIES, 20, 10, 4, 150,
				Duration.ofDays(14), 100_000, 100, Duration.ofDays(1));
		this.fixture = new StoreFixture(redis, settings);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
		this.testRedis.deleteKeys();
	}

	@Test
	void concurrentOperationsLoseNoTaskAndCompleteEachCreationAtMostOnce() throws InterruptedException {
		Model model = new Model();
		long seed = System.nanoTime();
		long deadline = System.nanoTime() + RUN.toNanos();
		List<Worker> workers = new ArrayList<>();
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < THREADS; i++) {
			Worker worker = new Worker(i, new SplittableRandom(seed + i), model, deadline);
			workers.add(worker);
			Thread thread = new Thread(worker, "fuzz-" + i);
			threads.add(thread);
			thread.start();
		}
		for (Thread thread : threads) {
			thread.join(RUN.toMillis() + 20_000);
			assertThat(thread.isAlive()).as("%s still running", thread.getName()).isFalse();
		}
		for (Worker worker : workers) {
			worker.ackEverythingHeld();
		}
		drain(model);

		String summary = model.summary(this.fixture, this.testRedis.version(), seed);
		System.out.println(summary);
		SoftAssertions softly = new SoftAssertions();
		softly.assertThat(model.errors).as("operations that threw (%s)", summary).isEmpty();
		for (String queue : QUEUES) {
			PartitionKeys keys = this.fixture.keys(queue);
			softly.assertThat(StoreInvariants.violations(this.fixture.redis, keys))
				.as("invariants of %s", queue)
				.isEmpty();
			softly.assertThat(this.fixture.redis.opsForList().size(keys.wake()))
				.as("wake tokens of %s", queue)
				.isLessThanOrEqualTo(64);
			softly.assertThat(this.fixture.redis.opsForList().size(keys.tick()))
				.as("tick tokens of %s", queue)
				.isLessThanOrEqualTo(1);
		}
		softly.assertThat(model.completedMoreThanOnce()).as("lives acknowledged DONE more than once").isEmpty();
		softly.assertThat(model.foreignClaims())
			.as("claimed lives that were never created under that queue and id")
			.isEmpty();
		softly.assertThat(model.endings(this.fixture)).as("lives that did not end in exactly one place").isEmpty();
		softly.assertThat(model.counterMismatches(this.fixture))
			.as("counters that disagree with what the callers saw")
			.isEmpty();
		softly.assertThat(model.timerOverlaps()).as("two timer owners at once").isEmpty();
		softly.assertThat(model.exercised())
			.as("what the run exercised (%s)", summary)
			.allSatisfy((what, count) -> assertThat(count).as(what).isPositive());
		softly.assertThat(model.staleLeaseHarm).as("a lease of one life changed a later life of the same id").isEmpty();
		softly.assertThat(model.reusedTokens())
			.as("lease tokens minted for more than one claim of the same task id (a stale lease of an earlier "
					+ "task with that id is accepted as the lease of the later one)")
			.isEmpty();
		softly.assertAll();
	}

	@Test
	void aLeaseOfAnEarlierLifeCannotCompleteALaterLifeOfTheSameId() {
		String queue = "fuzz-lives";
		TaskId id = TaskId.of("reused-id");
		assertThat(this.fixture.scheduler.submit(TaskRequest.of(queue, "first").id(id)).created()).isTrue();
		ClaimedTask first = this.fixture.store.claim(queue, 1, "worker-1").tasks().get(0);
		// worker-1 stalls; its lease expires, and worker-2 runs and completes the task
		await().atMost(Duration.ofSeconds(5))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> !this.fixture.store.claim(queue, 1, "worker-2").tasks().isEmpty());
		Map<Object, Object> afterReap = this.fixture.hash(queue, id.value());
		assertThat(afterReap.get("k")).as("token of the second delivery").isNotEqualTo(first.token());
		assertThat(this.fixture.store.ack(queue, List.of(new Lease(id, (String) afterReap.get("k"), null))))
			.containsExactly(AckOutcome.DONE);
		// the same id is scheduled again: a new task, which worker-1 happens to claim
		assertThat(this.fixture.scheduler.submit(TaskRequest.of(queue, "second").id(id)).created()).isTrue();
		ClaimedTask second = this.fixture.store.claim(queue, 1, "worker-1").tasks().get(0);
		assertThat(second.envelope()).contains("second");
		// worker-1's stalled run of the first task finishes now
		List<AckOutcome> staleAck = this.fixture.store.ack(queue, List.of(first.lease()));
		assertThat(staleAck)
			.as("ack with the lease of the first task (token %s; second task's token %s)", first.token(),
					second.token())
			.containsExactly(AckOutcome.STALE);
		assertThat(this.fixture.scheduler.find(queue, id)).as("the second task after the stale ack of the first")
			.hasValueSatisfying((info) -> assertThat(info.state()).isEqualTo(TaskState.ACTIVE));
	}

	/**
	 * Claim and complete everything that is or becomes due, until sched, ready and lease
	 * are empty in both partitions (dead letters stay). Claims here are not limited by
	 * the small byte budget of the run.
	 */
	private void drain(Model model) {
		StoreSettings settings = this.fixture.settings;
		RedisTaskStore drainer = new RedisTaskStore(this.fixture.scripts,
				new StoreSettings(settings.keyPrefix(), settings.leaseDuration(), settings.reapGrace(),
						settings.maxDeliveries(), 500, 100, settings.fanoutBatch(), 1024 * 1024,
						settings.deadLetterMaxAge(), settings.deadLetterMaxCount(), settings.trimLimit(),
						settings.tombstoneTtl()));
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (true) {
			boolean claimed = false;
			boolean empty = true;
			for (String queue : QUEUES) {
				ClaimBatch batch = drainer.claim(queue, 200, "drain");
				if (!batch.tasks().isEmpty()) {
					claimed = true;
					List<Lease> leases = batch.tasks().stream().map(ClaimedTask::lease).toList();
					List<AckOutcome> outcomes = drainer.ack(queue, leases);
					for (int i = 0; i < leases.size(); i++) {
						ClaimedTask task = batch.tasks().get(i);
						model.claimed(queue, task, model.lifeOf(task), "drain");
						model.acked(queue, task.id().value(), model.lifeOf(task), task.token(), outcomes.get(i),
								"drain");
					}
				}
				PartitionKeys keys = this.fixture.keys(queue);
				empty &= this.fixture.redis.opsForZSet().zCard(keys.sched()) == 0
						&& this.fixture.redis.opsForList().size(keys.ready()) == 0
						&& this.fixture.redis.opsForZSet().zCard(keys.lease()) == 0;
			}
			if (empty) {
				return;
			}
			assertThat(System.nanoTime()).as("time to drain the queues; left: %s", snapshot()).isLessThan(deadline);
			if (!claimed) {
				sleep(10);
			}
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private String snapshot() {
		StringBuilder out = new StringBuilder();
		for (String queue : QUEUES) {
			PartitionKeys keys = this.fixture.keys(queue);
			Set<String> ids = new TreeSet<>();
			ids.addAll(orEmpty(this.fixture.redis.opsForZSet().range(keys.sched(), 0, 20)));
			ids.addAll(orEmpty(this.fixture.redis.opsForZSet().range(keys.lease(), 0, 20)));
			ids.addAll(orEmpty(this.fixture.redis.opsForList().range(keys.ready(), 0, 20)));
			out.append("\n")
				.append(queue)
				.append(" at ")
				.append(redisTime())
				.append(": sched=")
				.append(scored(keys.sched()))
				.append(" ready=")
				.append(this.fixture.redis.opsForList().range(keys.ready(), 0, 20))
				.append(" lease=")
				.append(scored(keys.lease()))
				.append(" stats=")
				.append(this.fixture.redis.opsForHash().entries(keys.stats()));
			for (String id : ids) {
				out.append("\n  ").append(id).append(" ").append(this.fixture.hash(queue, id));
			}
		}
		return out.toString();
	}

	private List<String> scored(String key) {
		Set<TypedTuple<String>> tuples = this.fixture.redis.opsForZSet().rangeWithScores(key, 0, 20);
		return orEmpty(tuples).stream().map((t) -> t.getValue() + "@" + t.getScore().longValue()).toList();
	}

	private static <T> Collection<T> orEmpty(Collection<T> values) {
		return (values != null) ? values : List.of();
	}

	private long redisTime() {
		Long now = this.fixture.redis
			.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time(TimeUnit.MILLISECONDS));
		return (now != null) ? now : -1;
	}

	private static String key(String queue, String id) {
		return queue + "/" + id;
	}

	private long counter(StoreFixture fixture, String queue, String name) {
		Object value = fixture.redis.opsForHash().get(fixture.keys(queue).stats(), name);
		return (value != null) ? Long.parseLong(value.toString()) : 0;
	}

	/**
	 * What the callers saw, shared by all threads.
	 */
	private final class Model {

		final AtomicLong serials = new AtomicLong();

		/** Created lives: serial to queue/id. */
		final Map<Long, String> lives = new ConcurrentHashMap<>();

		final Map<String, List<String>> knownIds = new ConcurrentHashMap<>();

		final Map<String, Set<String>> knownIdSets = new ConcurrentHashMap<>();

		/** DONE acknowledgements per life: who acknowledged with which token. */
		final Map<Long, List<String>> done = new ConcurrentHashMap<>();

		/** Lives claimed per queue, id and token. */
		final Map<String, Set<Long>> tokens = new ConcurrentHashMap<>();

		/** Claims per life, for failure messages. */
		final Map<Long, List<String>> claims = new ConcurrentHashMap<>();

		final Map<String, AtomicInteger> cancelled = new ConcurrentHashMap<>();

		final Set<String> cancelRefused = ConcurrentHashMap.newKeySet();

		final Map<String, AtomicLong> doneByQueue = new ConcurrentHashMap<>();

		final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();

		final ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();

		final ConcurrentLinkedQueue<String> staleLeaseHarm = new ConcurrentLinkedQueue<>();

		final ConcurrentLinkedQueue<Object[]> ticks = new ConcurrentLinkedQueue<>();

		final ConcurrentLinkedQueue<Object[]> resigns = new ConcurrentLinkedQueue<>();

		final Map<String, String> lastOwner = new ConcurrentHashMap<>();

		/**
		 * Tasks created and not yet seen completed or cancelled (dead letters included).
		 */
		long outstanding() {
			long finished = this.doneByQueue.values().stream().mapToLong(AtomicLong::get).sum()
					+ this.cancelled.values().stream().mapToLong(AtomicInteger::get).sum();
			return this.lives.size() - finished;
		}

		void count(String what) {
			this.counts.computeIfAbsent(what, (k) -> new AtomicLong()).incrementAndGet();
		}

		void error(String what, Throwable ex) {
			if (this.errors.size() < 50) {
				this.errors.add(what + ": " + ex);
			}
		}

		void created(String queue, String id, long life) {
			this.lives.put(life, key(queue, id));
			if (this.knownIdSets.computeIfAbsent(queue, (q) -> ConcurrentHashMap.newKeySet()).add(id)) {
				this.knownIds.computeIfAbsent(queue, (q) -> Collections.synchronizedList(new ArrayList<>())).add(id);
			}
		}

		long lifeOf(ClaimedTask task) {
			String life = AbstractStoreFuzzIntegrationTests.this.fixture.codec.read(task.envelope())
				.headers()
				.get(LIFE);
			return (life != null) ? Long.parseLong(life) : -1;
		}

		void claimed(String queue, ClaimedTask task, long life, String who) {
			count("claimed");
			this.tokens
				.computeIfAbsent(key(queue, task.id().value()) + " " + task.token(),
						(k) -> ConcurrentHashMap.newKeySet())
				.add(life);
			this.claims.computeIfAbsent(life, (l) -> Collections.synchronizedList(new ArrayList<>()))
				.add(who + " claimed " + key(queue, task.id().value()) + " with " + task.token() + " (delivery "
						+ task.deliveries() + ")");
		}

		void acked(String queue, String id, long life, String token, AckOutcome outcome, String who) {
			count("ack " + outcome);
			if (outcome == AckOutcome.DONE) {
				this.done.computeIfAbsent(life, (l) -> Collections.synchronizedList(new ArrayList<>()))
					.add(who + " with " + token);
				this.doneByQueue.computeIfAbsent(queue, (q) -> new AtomicLong()).incrementAndGet();
			}
			if (outcome == AckOutcome.CORRUPT) {
				this.errors.add("ack of " + key(queue, id) + " reported corrupt data");
			}
		}

		void cancelled(String queue, String id) {
			this.cancelled.computeIfAbsent(key(queue, id), (k) -> new AtomicInteger()).incrementAndGet();
		}

		List<String> completedMoreThanOnce() {
			List<String> problems = new ArrayList<>();
			this.done.forEach((life, acks) -> {
				if (acks.size() > 1) {
					problems.add("life " + life + " of " + this.lives.get(life) + " acknowledged DONE " + acks.size()
							+ " times " + acks + "; its claims: " + this.claims.get(life));
				}
			});
			return problems;
		}

		List<String> reusedTokens() {
			List<String> problems = new ArrayList<>();
			new TreeMap<>(this.tokens).forEach((token, lives) -> {
				if (lives.size() > 1) {
					problems.add(token + " was minted for lives " + new TreeSet<>(lives));
				}
			});
			return (problems.size() > 10) ? List.of(problems.size() + " tokens, for example " + problems.subList(0, 10))
					: problems;
		}

		List<String> foreignClaims() {
			List<String> problems = new ArrayList<>();
			this.claims.forEach((life, claims) -> {
				String key = this.lives.get(life);
				for (String claim : claims) {
					if (key == null || !claim.contains(" claimed " + key + " with ")) {
						problems.add("life " + life + " (created as " + key + "): " + claim);
					}
				}
			});
			this.done.keySet().forEach((life) -> {
				if (!this.lives.containsKey(life)) {
					problems.add("life " + life + " was acknowledged DONE but never created");
				}
			});
			return problems;
		}

		/**
		 * Every life ended in exactly one place. Per id: lives = completed + dead (0 or
		 * 1) + cancelled, where the cancellations a caller cannot see (a reaped task
		 * whose cancel was requested while it ran) are allowed only for ids whose cancel
		 * was refused at least once, and must add up with the partition's counter.
		 */
		List<String> endings(StoreFixture fixture) {
			List<String> problems = new ArrayList<>();
			Map<String, List<Long>> livesByKey = new TreeMap<>();
			this.lives.forEach((life, key) -> livesByKey.computeIfAbsent(key, (k) -> new ArrayList<>()).add(life));
			Map<String, Long> deadLifeByKey = new HashMap<>();
			for (String queue : QUEUES) {
				PartitionKeys keys = fixture.keys(queue);
				Set<String> dead = fixture.redis.opsForZSet().range(keys.dead(), 0, -1);
				for (String id : (dead != null) ? dead : Set.<String>of()) {
					String envelope = fixture.redis.opsForValue().get(keys.payload(id));
					if (envelope == null) {
						problems.add(key(queue, id) + " is dead without payload");
						continue;
					}
					long life = Long.parseLong(fixture.codec.read(envelope).headers().get(LIFE));
					deadLifeByKey.put(key(queue, id), life);
					if (!key(queue, id).equals(this.lives.get(life))) {
						problems.add(key(queue, id) + " is dead with life " + life + " of " + this.lives.get(life));
					}
					if (this.done.containsKey(life)) {
						problems.add("life " + life + " of " + key(queue, id) + " is dead and was also completed: "
								+ this.done.get(life));
					}
				}
			}
			Map<String, Long> invisibleCancels = new HashMap<>();
			livesByKey.forEach((key, lives) -> {
				long completed = lives.stream().filter(this.done::containsKey).count();
				long dead = deadLifeByKey.containsKey(key) ? 1 : 0;
				long cancelled = this.cancelled.getOrDefault(key, new AtomicInteger()).get();
				long unexplained = lives.size() - completed - dead - cancelled;
				if (unexplained < 0 || (unexplained > 0 && !this.cancelRefused.contains(key))) {
					problems.add(key + ": " + lives.size() + " lives " + lives + ", " + completed + " completed, "
							+ dead + " dead, " + cancelled + " cancelled by callers"
							+ (this.cancelRefused.contains(key) ? ", cancel requested while running" : ""));
				}
				invisibleCancels.merge(key.substring(0, key.indexOf('/')), Math.max(0, unexplained), Long::sum);
			});
			for (String queue : QUEUES) {
				long callerCancels = this.cancelled.entrySet()
					.stream()
					.filter((entry) -> entry.getKey().startsWith(queue + "/"))
					.mapToLong((entry) -> entry.getValue().get())
					.sum();
				long counted = counter(fixture, queue, "canceled");
				long invisible = invisibleCancels.getOrDefault(queue, 0L);
				if (counted != callerCancels + invisible) {
					problems.add(queue + ": canceled counter " + counted + " but callers saw " + callerCancels
							+ " cancellations and " + invisible + " tasks vanished after a cancel request");
				}
			}
			return problems;
		}

		List<String> counterMismatches(StoreFixture fixture) {
			List<String> problems = new ArrayList<>();
			for (String queue : QUEUES) {
				long created = this.lives.values().stream().filter((key) -> key.startsWith(queue + "/")).count();
				check(problems, queue + " enq", counter(fixture, queue, "enq"), created);
				check(problems, queue + " done", counter(fixture, queue, "done"),
						this.doneByQueue.getOrDefault(queue, new AtomicLong()).get());
				Long dead = fixture.redis.opsForZSet().zCard(fixture.keys(queue).dead());
				check(problems, queue + " dead - redriven", counter(fixture, queue, "dead")
						- counter(fixture, queue, "redriven") - counter(fixture, queue, "purged"), dead);
				check(problems, queue + " corrupt", counter(fixture, queue, "corrupt"), 0);
			}
			return problems;
		}

		private void check(List<String> problems, String what, long actual, long expected) {
			if (actual != expected) {
				problems.add(what + ": counter " + actual + ", expected " + expected);
			}
		}

		/**
		 * Two different owners never hold a partition's timer at once: between owner A's
		 * tick at tA and owner B's tick at tB < tA + ttl, A must have resigned.
		 */
		List<String> timerOverlaps() {
			List<String> problems = new ArrayList<>();
			for (String queue : QUEUES) {
				List<Object[]> owned = this.ticks.stream()
					.filter((tick) -> tick[0].equals(queue) && ((TimerTick) tick[2]).owner())
					.sorted((a, b) -> Long.compare(((TimerTick) a[2]).now(), ((TimerTick) b[2]).now()))
					.toList();
				for (int i = 0; i < owned.size(); i++) {
					TimerTick a = (TimerTick) owned.get(i)[2];
					String ownerA = (String) owned.get(i)[1];
					for (int j = i + 1; j < owned.size(); j++) {
						TimerTick b = (TimerTick) owned.get(j)[2];
						String ownerB = (String) owned.get(j)[1];
						if (b.now() >= a.now() + a.ttlMs() - CLOCK_TOLERANCE_MS) {
							break;
						}
						if (!ownerA.equals(ownerB) && !resigned(queue, ownerA, a.now(), b.now())) {
							problems.add(queue + ": " + ownerA + " owned the timer at " + a.now() + " for " + a.ttlMs()
									+ " ms, yet " + ownerB + " owned it at " + b.now());
						}
					}
				}
			}
			return problems;
		}

		private boolean resigned(String queue, String owner, long from, long to) {
			return this.resigns.stream()
				.anyMatch((resign) -> resign[0].equals(queue) && resign[1].equals(owner)
						&& (long) resign[3] >= from - CLOCK_TOLERANCE_MS
						&& (long) resign[2] <= to + CLOCK_TOLERANCE_MS);
		}

		/** Events the run must have produced to mean anything. */
		Map<String, Long> exercised() {
			Map<String, Long> exercised = new LinkedHashMap<>();
			for (String what : List.of("ack DONE", "ack STALE", "enqueue EXISTING", "enqueue DUPLICATE",
					"fail RETRY_SCHEDULED", "fail DEAD", "cancel true", "cancel false", "reschedule true",
					"redrive true", "release RELEASED", "extend EXTENDED", "timer takeover")) {
				exercised.put(what, this.counts.getOrDefault(what, new AtomicLong()).get());
			}
			for (String counter : List.of("reaped", "promoted", "retry", "dead", "redriven")) {
				exercised.put("counter " + counter,
						QUEUES.stream()
							.mapToLong(
									(queue) -> counter(AbstractStoreFuzzIntegrationTests.this.fixture, queue, counter))
							.sum());
			}
			exercised.put("dead letters at the end",
					QUEUES.stream()
						.mapToLong((queue) -> AbstractStoreFuzzIntegrationTests.this.fixture.redis.opsForZSet()
							.zCard(AbstractStoreFuzzIntegrationTests.this.fixture.keys(queue).dead()))
						.sum());
			return exercised;
		}

		String summary(StoreFixture fixture, String version, long seed) {
			Map<String, Long> sorted = new TreeMap<>();
			this.counts.forEach((what, count) -> sorted.put(what, count.get()));
			Map<String, Map<Object, Object>> stats = new TreeMap<>();
			for (String queue : QUEUES) {
				stats.put(queue, new TreeMap<>(fixture.redis.opsForHash().entries(fixture.keys(queue).stats())));
			}
			return "fuzz: redis=" + version + " seed=" + seed + " lives=" + this.lives.size() + " ops=" + sorted
					+ " stats=" + stats;
		}

	}

	/**
	 * A lease one thread holds, the order in which the thread claimed it, and when it
	 * means to finish the run.
	 */
	private record Held(String queue, ClaimedTask task, long life, long claimOrder, long actAtNanos) {
	}

	private final class Worker implements Runnable {

		private final int index;

		private final String nonce;

		private final String owner;

		private final SplittableRandom random;

		private final Model model;

		private final long deadline;

		private final List<Held> held = new ArrayList<>();

		private long claims;

		Worker(int index, SplittableRandom random, Model model, long deadline) {
			this.index = index;
			this.nonce = "w" + index;
			this.owner = "owner-" + index;
			this.random = random;
			this.model = model;
			this.deadline = deadline;
		}

		@Override
		public void run() {
			while (System.nanoTime() < this.deadline) {
				try {
					step();
				}
				catch (RuntimeException | AssertionError ex) {
					this.model.error("thread " + this.index, ex);
				}
			}
		}

		private StoreFixture fixture() {
			return AbstractStoreFuzzIntegrationTests.this.fixture;
		}

		private void step() {
			Held due = dueLease();
			if (due != null && this.random.nextInt(10) < 7) {
				finish(due);
				return;
			}
			int choice = this.random.nextInt(100);
			if (choice < 25) {
				enqueue();
			}
			else if (choice < 55) {
				if (this.held.size() < 6) {
					claim();
				}
			}
			else if (choice < 61) {
				cancel();
			}
			else if (choice < 69) {
				reschedule();
			}
			else if (choice < 82) {
				promote();
			}
			else if (choice < 85) {
				redrive();
			}
			else if (choice < 92) {
				find();
			}
			else {
				heartbeat();
			}
		}

		private String queue() {
			return QUEUES.get(this.random.nextInt(QUEUES.size()));
		}

		private Duration millis(int bound) {
			return Duration.ofMillis(this.random.nextInt(bound));
		}

		private void enqueue() {
			if (this.model.outstanding() >= MAX_OUTSTANDING) {
				return;
			}
			int size = (this.random.nextInt(4) == 0) ? 2 + this.random.nextInt(4) : 1;
			List<TaskRequest> requests = new ArrayList<>();
			List<Long> lives = new ArrayList<>();
			for (int i = 0; i < size; i++) {
				long life = this.model.serials.incrementAndGet();
				String queue = queue();
				int kind = this.random.nextInt(10);
				TaskRequest request;
				if (kind == 0) {
					request = TaskRequest.of(queue, new Item("same-" + this.random.nextInt(4), 0))
						.uniqueFor(Duration.ofMillis(300 + this.random.nextInt(1200)));
				}
				else if (kind < 3) {
					request = TaskRequest.of(queue, new Item("keyed", life))
						.uniqueKey("key-" + this.random.nextInt(6))
						.uniqueFor(Duration.ofMillis(300 + this.random.nextInt(1200)));
				}
				else {
					request = TaskRequest.of(queue, new Item("plain", life));
				}
				if (this.random.nextInt(10) < 4) {
					request = request.id("id-" + this.random.nextInt(20));
				}
				if (this.random.nextInt(100) < 15) {
					request = request.at(Instant.now().plusMillis(this.random.nextInt(400) - 100));
				}
				else {
					request = request.delay((this.random.nextInt(5) == 0) ? Duration.ZERO : millis(300));
				}
				if (this.random.nextBoolean()) {
					request = request.maxAttempts(1 + this.random.nextInt(4));
				}
				if (this.random.nextInt(3) == 0) {
					// Priorities move ready tasks between lists: every path back to ready
					// must keep each in the list of its own.
					request = request.priority(this.random.nextInt(5) - 2);
				}
				requests.add(request.header(LIFE, Long.toString(life)));
				lives.add(life);
			}
			List<ScheduleResult> results = (size == 1 && this.random.nextBoolean())
					? List.of(fixture().scheduler.submit(requests.get(0))) : fixture().scheduler.scheduleAll(requests);
			assertThat(results).hasSize(size);
			for (int i = 0; i < size; i++) {
				TaskRequest request = requests.get(i);
				ScheduleResult result = results.get(i);
				this.model.count("enqueue " + result.outcome());
				if (request.id() != null && result.outcome() != ScheduleResult.Outcome.DUPLICATE) {
					assertThat(result.id()).as("id of %s", result).isEqualTo(request.id());
				}
				if (result.created()) {
					this.model.created(request.queue(), result.id().value(), lives.get(i));
				}
			}
		}

		private void claim() {
			String queue = queue();
			int max = 1 + this.random.nextInt(3);
			String claimNonce = this.nonce + "." + (this.claims + 1);
			ClaimBatch batch = fixture().store.claim(queue, max, claimNonce);
			assertThat(batch.tasks().size()).isLessThanOrEqualTo(max);
			if (!batch.tasks().isEmpty() && this.random.nextInt(100) < 5) {
				// The reply is lost (a timeout): only recover can give these tasks back
				// before their leases expire.
				this.claims++;
				int recovered = fixture().store.recover(queue, List.of(claimNonce));
				assertThat(recovered).isLessThanOrEqualTo(batch.tasks().size());
				this.model.count("recover " + recovered + " of " + batch.tasks().size());
				return;
			}
			long now = System.nanoTime();
			for (ClaimedTask task : batch.tasks()) {
				assertThat(task.token()).startsWith(claimNonce + ":");
				long life = this.model.lifeOf(task);
				this.model.claimed(queue, task, life, "thread " + this.index);
				// most runs finish at once; some stall past their lease and grace
				long hold = (this.random.nextInt(100) < 20) ? 350 + this.random.nextInt(450) : this.random.nextInt(60);
				this.held.add(new Held(queue, task, life, ++this.claims, now + TimeUnit.MILLISECONDS.toNanos(hold)));
			}
		}

		private Held dueLease() {
			long now = System.nanoTime();
			List<Held> due = this.held.stream().filter((h) -> h.actAtNanos() <= now).toList();
			return due.isEmpty() ? null : due.get(this.random.nextInt(due.size()));
		}

		/**
		 * A lease this thread claimed later with the same id and token but for a later
		 * life: a success with {@code lease} can only have acted on that later life.
		 */
		private Held twin(Held lease) {
			return this.held.stream()
				.filter((other) -> other != lease && other.claimOrder() > lease.claimOrder()
						&& other.queue().equals(lease.queue()) && other.task().id().equals(lease.task().id())
						&& other.task().token().equals(lease.task().token()) && other.life() != lease.life())
				.findFirst()
				.orElse(null);
		}

		private void harm(Held lease, Held twin, String what) {
			this.model.staleLeaseHarm.add("thread " + this.index + ": " + what + " with the lease of life "
					+ lease.life() + " of " + key(lease.queue(), lease.task().id().value()) + " (token "
					+ lease.task().token() + ") acted on life " + twin.life() + ", claimed later with the same token");
		}

		private void finish(Held lease) {
			String queue = lease.queue();
			String id = lease.task().id().value();
			Held twin = twin(lease);
			int choice = this.random.nextInt(100);
			if (choice < 60) {
				this.held.remove(lease);
				AckOutcome outcome = fixture().store.ack(queue, List.of(lease.task().lease())).get(0);
				this.model.acked(queue, id, lease.life(), lease.task().token(), outcome, "thread " + this.index);
				if (twin != null && outcome == AckOutcome.DONE) {
					harm(lease, twin, "ack DONE");
				}
			}
			else if (choice < 85) {
				this.held.remove(lease);
				boolean dead = this.random.nextInt(5) == 0;
				TaskFailure failure = dead
						? new TaskFailure(null, FailureReason.NON_RETRYABLE, "java.lang.IllegalStateException",
								"fuzz says no")
						: new TaskFailure(millis(101), FailureReason.RETRIES_EXHAUSTED, "java.lang.RuntimeException",
								"try again");
				FailOutcome outcome = fixture().store.fail(queue, lease.task().lease(), failure);
				this.model.count("fail " + outcome.kind());
				if (outcome.kind() == FailOutcome.Kind.CANCELLED) {
					this.model.cancelled(queue, id);
				}
				if (outcome.kind() == FailOutcome.Kind.CORRUPT) {
					this.model.errors.add("fail of " + key(queue, id) + " reported corrupt data");
				}
				if (twin != null && outcome.kind() != FailOutcome.Kind.STALE
						&& outcome.kind() != FailOutcome.Kind.GONE) {
					harm(lease, twin, "fail " + outcome.kind());
				}
			}
			else if (choice < 93) {
				this.held.remove(lease);
				ReleaseOutcome outcome = fixture().store.release(queue, List.of(lease.task().lease())).get(0);
				this.model.count("release " + outcome);
				if (outcome == ReleaseOutcome.CANCELLED) {
					this.model.cancelled(queue, id);
				}
				if (twin != null && outcome != ReleaseOutcome.LOST) {
					harm(lease, twin, "release " + outcome);
				}
			}
			else {
				ExtendOutcome outcome = fixture().store.extend(queue, List.of(lease.task().lease())).get(0);
				this.model.count("extend " + outcome);
				this.held.remove(lease);
				this.held.add(new Held(queue, lease.task(), lease.life(), lease.claimOrder(),
						System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(this.random.nextInt(200))));
			}
		}

		private void heartbeat() {
			String queue = queue();
			long now = System.nanoTime();
			List<Held> running = this.held.stream()
				.filter((h) -> h.queue().equals(queue) && h.actAtNanos() - now < TimeUnit.MILLISECONDS.toNanos(100))
				.toList();
			if (running.isEmpty()) {
				return;
			}
			List<ExtendOutcome> outcomes = fixture().store.extend(queue,
					running.stream().map((h) -> h.task().lease()).toList());
			assertThat(outcomes).hasSize(running.size());
			outcomes.forEach((outcome) -> this.model.count("extend " + outcome));
		}

		private String knownId(String queue) {
			List<String> ids = this.model.knownIds.get(queue);
			if (ids == null) {
				return null;
			}
			synchronized (ids) {
				if (ids.isEmpty()) {
					return null;
				}
				int recent = Math.min(ids.size(), 40);
				return (this.random.nextInt(10) < 7) ? ids.get(ids.size() - 1 - this.random.nextInt(recent))
						: ids.get(this.random.nextInt(ids.size()));
			}
		}

		private void cancel() {
			String queue = queue();
			String id = knownId(queue);
			if (id == null) {
				return;
			}
			boolean cancelled = fixture().scheduler.cancel(queue, TaskId.of(id));
			this.model.count("cancel " + cancelled);
			if (cancelled) {
				this.model.cancelled(queue, id);
			}
			else {
				this.model.cancelRefused.add(key(queue, id));
			}
		}

		private void reschedule() {
			String queue = queue();
			String id = knownId(queue);
			if (id == null) {
				return;
			}
			boolean moved = (this.random.nextInt(5) == 0)
					? fixture().scheduler.reschedule(queue, TaskId.of(id),
							Instant.now().plusMillis(this.random.nextInt(350) - 50))
					: fixture().scheduler.reschedule(queue, TaskId.of(id), millis(300));
			this.model.count("reschedule " + moved);
		}

		private void promote() {
			String queue = queue();
			if (this.random.nextInt(100) < 15) {
				long before = redisTime();
				fixture().store.resignTimer(queue, this.owner);
				long after = redisTime();
				this.model.resigns.add(new Object[] { queue, this.owner, before, after });
				this.model.count("resign");
				return;
			}
			TimerTick tick = fixture().store.promote(queue, this.owner, TIMER_TTL);
			if (tick.owner()) {
				assertThat(tick.ttlMs()).isEqualTo(TIMER_TTL.toMillis());
				this.model.count("timer owned");
			}
			else {
				assertThat(tick.ttlMs()).isBetween(0L, TIMER_TTL.toMillis());
				this.model.count("timer refused");
			}
			if (tick.owner()) {
				String previous = this.model.lastOwner.put(queue, this.owner);
				if (previous != null && !previous.equals(this.owner)) {
					this.model.count("timer takeover");
				}
			}
			this.model.ticks.add(new Object[] { queue, this.owner, tick });
		}

		private void redrive() {
			if (System.nanoTime() > this.deadline - Duration.ofSeconds(1).toNanos()) {
				return; // dead letters of the last second stay dead
			}
			String queue = queue();
			if (this.random.nextInt(20) == 0) {
				long moved = fixture().deadLetters.redriveAll(queue);
				this.model.count("redrive " + (moved > 0));
				return;
			}
			Set<String> dead = fixture().redis.opsForZSet().range(fixture().keys(queue).dead(), 0, 20);
			if (dead == null || dead.isEmpty()) {
				return;
			}
			List<String> ids = new ArrayList<>(dead);
			String id = ids.get(this.random.nextInt(ids.size()));
			String error = fixture().redis.opsForValue().get(fixture().keys(queue).error(id));
			this.model.count("redrive of " + ((error != null) ? error.substring(0, error.indexOf('\n')) : "?"));
			this.model.count("redrive " + fixture().deadLetters.redrive(queue, TaskId.of(id)));
		}

		private void find() {
			String queue = queue();
			String id = knownId(queue);
			if (id != null) {
				fixture().scheduler.find(queue, TaskId.of(id)).ifPresent((info) -> {
					assertThat(info.state()).isNotNull();
					assertThat(info.id().value()).isEqualTo(id);
				});
			}
		}

		/** After the run: complete every lease still held, stale or not. */
		void ackEverythingHeld() {
			Map<String, List<Held>> byQueue = this.held.stream().collect(Collectors.groupingBy(Held::queue));
			byQueue.forEach((queue, leases) -> {
				for (Held lease : leases) {
					Held twin = twin(lease);
					AckOutcome outcome = fixture().store.ack(queue, List.of(lease.task().lease())).get(0);
					this.model.acked(queue, lease.task().id().value(), lease.life(), lease.task().token(), outcome,
							"thread " + this.index + " at the end");
					if (twin != null && outcome == AckOutcome.DONE) {
						harm(lease, twin, "ack DONE");
					}
					this.held.remove(lease);
				}
			});
		}

	}

	record Item(String name, long n) {
	}

}

package dev.delayedtasks.internal.store;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.TaskStore.FailOutcome;
import dev.delayedtasks.test.TestRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Measures what a scheduled task costs in Redis memory, against the documented target of
 * less than 400 B beyond a 100 B payload, and checks that task hashes keep their compact
 * encoding in every state. Subclasses choose the Redis (a private server, so that nothing
 * else moves {@code used_memory}).
 */
abstract class AbstractTaskMemoryIntegrationTests {

	/**
	 * A quarter of the benchmark's 100,000 tasks, at the same load factor of Redis's hash
	 * tables (the key space and the schedule's dict: 25,000 of 32,768 buckets per 32,768
	 * ...), so each task's share of their bucket arrays is the benchmark's too; with
	 * 10,000 tasks it would be 8 B more.
	 */
	private static final int TASKS = 25_000;

	/** The payload of the measurement, as JSON: {@code {"text":"xx...x"}}. */
	private static final int PAYLOAD_BYTES = 100;

	/** The documented target (docs/performance.md): bytes per task beyond the payload. */
	private static final long TARGET_OVERHEAD = 400;

	/**
	 * The documented key shape ({@code dt:{emails:0}:t:<id>}): key length counts twice
	 * per task, so the measurement uses it rather than this class's longer test prefix.
	 * The server is private to this class, so the prefix cannot meet another test's keys.
	 */
	private static final String DOCUMENTED_PREFIX = "dt";

	private static final String DOCUMENTED_QUEUE = "emails";

	private static final RedisScript<Long> MEMORY_USAGE = RedisScript
		.of("return redis.call('MEMORY', 'USAGE', KEYS[1], 'SAMPLES', '0')", Long.class);

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
		this.testRedis.deleteKeys();
	}

	@Test
	void aScheduledTaskWithAHundredBytePayloadCostsLessThanTheTargetBeyondIt() {
		String queue = DOCUMENTED_QUEUE;
		StoreFixture documented = new StoreFixture(this.testRedis,
				StoreFixture.settings(DOCUMENTED_PREFIX, StoreFixture.LEASE, StoreFixture.GRACE));
		try {
			Payload payload = new Payload("x".repeat(PAYLOAD_BYTES - "{\"text\":\"\"}".length()));
			String body = documented.codec.envelope(queue, payload, Map.of());
			assertThat(body).as("envelope of a 100-byte payload").hasSize("{\"h\":{},\"b\":}".length() + PAYLOAD_BYTES);
			// warm up: the script cache, the partition's fixed keys and the queue index
			documented.scheduler.schedule(queue, payload, Duration.ofHours(1));
			settle();
			long before = usedMemory();
			List<TaskRequest> requests = new ArrayList<>(TASKS);
			for (int i = 0; i < TASKS; i++) {
				requests.add(TaskRequest.of(queue, payload).delay(Duration.ofHours(2).plusSeconds(i)));
			}
			List<ScheduleResult> results = documented.scheduler.scheduleAll(requests);
			assertThat(results).hasSize(TASKS).allSatisfy((result) -> assertThat(result.created()).isTrue());
			settle();
			long after = usedMemory();
			PartitionKeys keys = documented.keys(queue);
			assertThat(keys.task("x")).startsWith("dt:{emails:0}:");
			assertThat(documented.redis.opsForZSet().zCard(keys.sched())).isEqualTo(TASKS + 1);

			String id = results.get(TASKS / 2).id().value();
			long perTask = (after - before) / TASKS;
			long hash = memoryUsage(documented, keys.task(id));
			long payloadBytes = memoryUsage(documented, keys.payload(id));
			long schedPerMember = memoryUsage(documented, keys.sched()) / (TASKS + 1);
			long usage = hash + payloadBytes + schedPerMember;
			System.out.println("memory: per_task_bytes=" + perTask + " overhead_bytes=" + (perTask - PAYLOAD_BYTES)
					+ " hash=" + hash + " payload=" + payloadBytes + " sched_per_member=" + schedPerMember
					+ " usage_overhead_bytes=" + (usage - PAYLOAD_BYTES) + " task_key_bytes=" + keys.task(id).length()
					+ " redis=" + this.testRedis.version());

			assertThat(encoding(documented, keys.task(id))).as("encoding of a scheduled task's hash")
				.isEqualTo(compactHash());
			assertThat(documented.hash(queue, id)).as("fields of a scheduled task")
				.containsOnlyKeys("s", "a", "v", "m", "f", "d", "c");
			assertThat(usage - PAYLOAD_BYTES).as("MEMORY USAGE of hash + payload + sched member, beyond the payload")
				.isLessThan(TARGET_OVERHEAD);
			assertThat(perTask - PAYLOAD_BYTES).as("used_memory per task, beyond the payload")
				.isPositive()
				.isLessThan(TARGET_OVERHEAD);
		}
		finally {
			Set<String> written = documented.redis.keys(DOCUMENTED_PREFIX + ":*");
			if (written != null && !written.isEmpty()) {
				documented.redis.delete(written);
			}
			documented.close();
		}
	}

	@Test
	void taskHashesStayCompactInEveryState() {
		String queue = "memory-states";
		PartitionKeys keys = this.fixture.keys(queue);
		List<TaskId> ids = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			ids.add(this.fixture.scheduler.schedule(TaskRequest.of(queue, new Payload("task " + i))
				.uniqueKey("customer-4711-reminder-" + i)
				.uniqueFor(Duration.ofDays(30))
				.maxAttempts(1000)
				.header("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")));
		}
		TaskId scheduled = this.fixture.scheduler.schedule(TaskRequest.of(queue, new Payload("later"))
			.delay(Duration.ofDays(3650))
			.uniqueKey("customer-4711-yearly")
			.uniqueFor(Duration.ofDays(3650)));
		assertThat(encoding(keys.task(scheduled.value()))).as("scheduled task with a unique key")
			.isEqualTo(compactHash());

		// a nonce as long as a worker's, with a fence counter in the hundreds of millions
		String nonce = "0123456789abcdef0123456789abcdef";
		ClaimBatch batch = this.fixture.store.claim(queue, 3, nonce);
		assertThat(batch.tasks()).hasSize(3);
		ClaimedTask active = batch.tasks().get(0);
		assertThat(this.fixture.hash(queue, active.id().value())).containsKeys("k", "u");
		assertThat(encoding(keys.task(active.id().value()))).as("active task").isEqualTo(compactHash());

		String longMessage = "m".repeat(TaskFailure.MAX_MESSAGE_LENGTH);
		String exceptionType = "com.example.some.rather.deeply.nested.pkg.SomethingWentWrongWhileSendingException";
		ClaimedTask failed = batch.tasks().get(1);
		FailOutcome retry = this.fixture.store.fail(queue, failed.lease(),
				new TaskFailure(Duration.ofHours(1), FailureReason.RETRIES_EXHAUSTED, exceptionType, longMessage));
		assertThat(retry.kind()).isEqualTo(FailOutcome.Kind.RETRY_SCHEDULED);
		assertThat(this.fixture.hash(queue, failed.id().value())).containsEntry("s", "S").containsEntry("a", "1");
		assertThat(encoding(keys.task(failed.id().value()))).as("task that failed once, retry scheduled")
			.isEqualTo(compactHash());

		ClaimedTask dead = batch.tasks().get(2);
		FailOutcome deadOutcome = this.fixture.store.fail(queue, dead.lease(),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, exceptionType, longMessage));
		assertThat(deadOutcome.kind()).isEqualTo(FailOutcome.Kind.DEAD);
		assertThat(encoding(keys.task(dead.id().value()))).as("dead task").isEqualTo(compactHash());

		assertThat(this.fixture.store.extend(queue, List.of(active.lease())))
			.containsExactly(TaskStore.ExtendOutcome.EXTENDED);
		assertThat(this.fixture.scheduler.cancel(queue, active.id())).isFalse();
		assertThat(this.fixture.hash(queue, active.id().value())).containsEntry("cr", "1");
		assertThat(encoding(keys.task(active.id().value()))).as("active task with a cancel request")
			.isEqualTo(compactHash());
		assertThat(StoreInvariants.violations(this.fixture.redis, keys)).isEmpty();
	}

	/**
	 * The compact hash encoding of this server: ziplist before Redis 7, listpack after.
	 */
	private String compactHash() {
		return this.testRedis.version().startsWith("6.") ? "ziplist" : "listpack";
	}

	/**
	 * Let incremental rehashing and query-buffer shrinking finish (Redis does both in its
	 * cron, ten times a second, later on a loaded machine): until {@code used_memory}
	 * stays within 1 KB over 200 ms, some 0.04 B a task.
	 */
	private void settle() {
		long[] last = { -1 };
		await().pollDelay(Duration.ofMillis(200))
			.pollInterval(Duration.ofMillis(200))
			.atMost(Duration.ofSeconds(10))
			.until(() -> {
				long now = usedMemory();
				boolean stable = Math.abs(now - last[0]) < 1024;
				last[0] = now;
				return stable;
			});
	}

	private long usedMemory() {
		Properties info = this.fixture.redis
			.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("memory"));
		assertThat(info).isNotNull();
		return Long.parseLong(info.getProperty("used_memory"));
	}

	/** {@code MEMORY USAGE key SAMPLES 0}, through a script for its integer reply. */
	private static long memoryUsage(StoreFixture fixture, String key) {
		Long reply = fixture.redis.execute(MEMORY_USAGE, List.of(key));
		assertThat(reply).as("MEMORY USAGE %s", key).isNotNull().isPositive();
		return reply;
	}

	private String encoding(String key) {
		return encoding(this.fixture, key);
	}

	private static String encoding(StoreFixture fixture, String key) {
		Object reply = fixture.redis.execute(
				(RedisCallback<Object>) (connection) -> connection.execute("OBJECT", bytes("ENCODING"), bytes(key)));
		assertThat(reply).as("OBJECT ENCODING %s", key).isInstanceOf(byte[].class);
		return new String((byte[]) reply, StandardCharsets.UTF_8);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	record Payload(String text) {
	}

}

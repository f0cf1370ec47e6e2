package dev.delayedtasks.internal.admin;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.PartitionProbe;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.StoreFixture;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link DeadLetterRetention}: dead letters that no failure trims (expired leases past
 * {@code max-deliveries}, corrupt data, a queue that stopped failing) are trimmed by age
 * and count on a schedule, in bounded batches; a stale dead entry of a live task drops
 * the entry and keeps the task; a broken queue or an unreachable Redis never stops it.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class DeadLetterRetentionIntegrationTests {

	private static final Duration MAX_AGE = Duration.ofHours(1);

	private TestRedis testRedis;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	@BeforeEach
	void setUp(TestRedis redis) {
		this.testRedis = redis;
	}

	@AfterEach
	void tearDown() throws Exception {
		// Newest first: the retention stops before the connection it uses.
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
	}

	@Test
	void theScheduleTrimsDeadLettersFromExpiredLeasesAndCorruptDataByAgeAndCountWithoutAnyFail() {
		// max-deliveries 1: a task whose first lease expires is dead-lettered; trim
		// limit 2: each script call deletes at most two, so a round takes several calls.
		StoreFixture fixture = fixture("schedule", 1, 3, 2);
		String reapedQueue = "rt-reaped";
		String corruptQueue = "rt-corrupt";
		PartitionProbe reaped = new PartitionProbe(fixture, reapedQueue);
		PartitionProbe corrupt = new PartitionProbe(fixture, corruptQueue);

		List<TaskId> expired = leaseExpiredDeadLetters(fixture, reapedQueue, 6);
		assertThat(fixture.deadLetters.list(reapedQueue, 10)).hasSize(6)
			.allSatisfy((letter) -> assertThat(letter.reason()).isEqualTo("max-deliveries"));
		List<TaskId> broken = corruptDeadLetters(fixture, corruptQueue, 2);
		assertThat(fixture.deadLetters.list(corruptQueue, 10)).hasSize(2)
			.allSatisfy((letter) -> assertThat(letter.reason()).isEqualTo("corrupt"));
		// A live task whose id is still in the dead set (a stale entry): trimming drops
		// the entry and keeps the task.
		TaskId live = fixture.scheduler.schedule(reapedQueue, "live", Duration.ofHours(1));

		long now = reaped.now();
		long old = now - MAX_AGE.toMillis() - 60_000;
		ageDeadLetter(fixture, reaped, expired.get(0), old);
		ageDeadLetter(fixture, reaped, expired.get(1), old + 1);
		ageDeadLetter(fixture, reaped, live, old + 2);
		for (int i = 2; i < 6; i++) {
			// young, but four of them: one over the max count of three
			ageDeadLetter(fixture, reaped, expired.get(i), now - 10_000 + i);
		}
		ageDeadLetter(fixture, corrupt, broken.get(0), old);
		ageDeadLetter(fixture, corrupt, broken.get(1), old + 1);
		long purgedBefore = reaped.stat("purged");

		DeadLetterRetention retention = new DeadLetterRetention(fixture.deadLetters, fixture.queues,
				Duration.ofMillis(100));
		retention.start();
		this.closeables.add(retention::stop);
		await().atMost(Duration.ofSeconds(10)).until(() -> reaped.dead().size() == 3 && corrupt.dead().isEmpty());

		assertThat(reaped.dead()).containsOnlyKeys(expired.get(3).value(), expired.get(4).value(),
				expired.get(5).value());
		expired.subList(0, 3).forEach((id) -> assertThat(reaped.taskKeys(id.value())).isEmpty());
		broken.forEach((id) -> assertThat(corrupt.taskKeys(id.value())).isEmpty());
		assertThat(reaped.task(live.value())).containsEntry("s", "S");
		assertThat(reaped.sched()).containsKey(live.value());
		assertThat(fixture.scheduler.find(reapedQueue, live)).isPresent();
		assertThat(reaped.stat("purged") - purgedBefore).isEqualTo(4);
		assertThat(corrupt.stat("purged")).isEqualTo(2);
		assertThat(reaped.stat("retry")).as("no fail was called").isZero();
		assertThat(reaped.violations()).isEmpty();
		assertThat(corrupt.violations()).isEmpty();
	}

	@Test
	void oneTrimDoesBoundedWorkAndTheNextOneGoesOn() {
		StoreFixture fixture = fixture("bounded", 1, 2, 2);
		String queue = "rt-bounded";
		PartitionProbe probe = new PartitionProbe(fixture, queue);
		List<TaskId> ids = leaseExpiredDeadLetters(fixture, queue, 12);
		long now = probe.now();
		for (int i = 0; i < ids.size(); i++) {
			ageDeadLetter(fixture, probe, ids.get(i), now - 10_000 + i);
		}
		// 10 over the count, 2 per call: three calls delete 6, the next trim the rest.
		assertThat(fixture.deadLetters.trim(queue, 3)).isEqualTo(6);
		assertThat(probe.dead()).hasSize(6);
		assertThat(fixture.deadLetters.trim(queue, 3)).isEqualTo(4);
		assertThat(fixture.deadLetters.trim(queue, 3)).isZero();
		assertThat(fixture.deadLetters.list(queue, 10)).extracting(DeadLetter::id)
			.containsExactly(ids.get(11), ids.get(10));
		assertThat(probe.violations()).isEmpty();
	}

	@Test
	void aQueueThatCannotBeTrimmedIsLoggedOnceAndDoesNotStopTheOthers(CapturedOutput output) {
		StoreFixture fixture = fixture("broken", 1, 1, 100);
		// The index is sorted: the broken queue comes first.
		String brokenQueue = "rt-a-broken";
		String queue = "rt-b-after";
		fixture.queues.register(brokenQueue);
		fixture.redis.opsForValue().set(fixture.keys(brokenQueue).dead(), "not a zset");
		PartitionProbe probe = new PartitionProbe(fixture, queue);
		List<TaskId> ids = leaseExpiredDeadLetters(fixture, queue, 3);
		long now = probe.now();
		for (int i = 0; i < ids.size(); i++) {
			ageDeadLetter(fixture, probe, ids.get(i), now - 10_000 + i);
		}
		DeadLetterRetention retention = new DeadLetterRetention(fixture.deadLetters, fixture.queues,
				Duration.ofMinutes(1));
		assertThat(retention.trimAll()).isEqualTo(2);
		assertThat(probe.dead()).containsOnlyKeys(ids.get(2).value());
		assertThat(retention.trimAll()).isZero();
		assertThat(output.getAll()).containsOnlyOnce("Could not trim the dead letters of queue 'rt-a-broken'")
			.contains("WRONGTYPE");
		fixture.redis.delete(fixture.keys(brokenQueue).dead());
		retention.trimAll();
		assertThat(output.getAll()).contains("Dead letters of queue 'rt-a-broken' can be trimmed again");
	}

	@Test
	void anUnreachableRedisIsLoggedOnceAndNeverThrows(CapturedOutput output) throws IOException {
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		LettuceConnectionFactory away = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofMillis(500)).build());
		away.afterPropertiesSet();
		away.start();
		this.closeables.add(away::destroy);
		StringRedisTemplate redis = new StringRedisTemplate(away);
		StoreSettings settings = StoreFixture.settings(this.testRedis.keyPrefix(), StoreFixture.LEASE,
				StoreFixture.GRACE);
		DeadLetterRetention retention = new DeadLetterRetention(new RedisDeadLetters(new StoreScripts(redis), settings),
				new QueueIndex(redis, settings.keyPrefix()), Duration.ofMinutes(1));
		assertThat(retention.trimAll()).isZero();
		assertThat(retention.trimAll()).isZero();
		assertThat(retention.trimAll()).isZero();
		assertThat(output.getAll()).containsOnlyOnce("Could not trim delayed-tasks dead letters");
	}

	@Test
	void startAndStopFollowTheLifecycle() {
		StoreFixture fixture = fixture("lifecycle", 10, 100, 100);
		DeadLetterRetention retention = new DeadLetterRetention(fixture.deadLetters, fixture.queues,
				Duration.ofMinutes(1));
		assertThat(retention.isRunning()).isFalse();
		retention.start();
		assertThat(retention.isRunning()).isTrue();
		retention.stop();
		assertThat(retention.isRunning()).isFalse();
	}

	/**
	 * A fixture under a key prefix of its own test (the class's prefix plus a suffix), so
	 * that a round over the queue index sees this test's queues only.
	 */
	private StoreFixture fixture(String test, int maxDeliveries, int maxCount, int trimLimit) {
		StoreFixture fixture = new StoreFixture(this.testRedis,
				new StoreSettings(this.testRedis.keyPrefix() + "." + test, StoreFixture.LEASE, StoreFixture.GRACE,
						maxDeliveries, 500, 100, 16, 1024 * 1024, MAX_AGE, maxCount, trimLimit, Duration.ofDays(1)));
		this.closeables.add(fixture);
		return fixture;
	}

	/**
	 * Dead letters with reason {@code max-deliveries}: each task is claimed and its lease
	 * moved into the past, so the next claim reaps it (max deliveries is 1).
	 */
	private static List<TaskId> leaseExpiredDeadLetters(StoreFixture fixture, String queue, int count) {
		List<TaskId> ids = fixture.scheduler
			.scheduleAll(IntStream.range(0, count).mapToObj((i) -> TaskRequest.of(queue, "task-" + i)).toList())
			.stream()
			.map((result) -> result.id())
			.toList();
		assertThat(fixture.store.claim(queue, count, "n1").tasks()).hasSize(count);
		PartitionKeys keys = fixture.keys(queue);
		ids.forEach((id) -> fixture.redis.opsForZSet().add(keys.lease(), id.value(), 1));
		fixture.store.claim(queue, 1, "n2");
		assertThat(new PartitionProbe(fixture, queue).dead()).hasSize(count);
		return ids;
	}

	/**
	 * Dead letters with reason {@code corrupt}: ready tasks whose state field is gone.
	 */
	private static List<TaskId> corruptDeadLetters(StoreFixture fixture, String queue, int count) {
		List<TaskId> ids = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			TaskId id = fixture.scheduler.enqueue(queue, "corrupt-" + i);
			fixture.redis.opsForHash().delete(fixture.keys(queue).task(id.value()), "s");
			ids.add(id);
		}
		fixture.store.claim(queue, count, "n1");
		return ids;
	}

	private static void ageDeadLetter(StoreFixture fixture, PartitionProbe probe, TaskId id, long deadAt) {
		fixture.redis.opsForZSet().add(probe.keys.dead(), id.value(), deadAt);
	}

}

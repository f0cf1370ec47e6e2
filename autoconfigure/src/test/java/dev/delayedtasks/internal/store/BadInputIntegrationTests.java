package dev.delayedtasks.internal.store;

import java.io.IOException;
import java.math.BigInteger;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.producer.RedisDelayedTaskScheduler;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.micrometer.observation.ObservationRegistry;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Every invalid request is refused with an {@link InvalidTaskRequestException} that names
 * the value and the rule, before anything is written; an unreachable Redis surfaces as a
 * {@link TaskStoreException} that carries the task id to retry with.
 */
@WithRedis
public class BadInputIntegrationTests {

	private static final String NAME_RULE = "use 1-64 letters, digits, '.', '-', '_'";

	private TestRedis testRedis;

	private StoreFixture fixture;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.testRedis = redis;
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	// queue names

	@Test
	void emptyQueueNameIsRejected() {
		assertRejected(() -> this.fixture.scheduler.enqueue("", new Payload("x")), "Queue name '' is invalid",
				"it has 0 characters", NAME_RULE);
	}

	@Test
	void queueNameOf65CharactersIsRejected() {
		String name = "q".repeat(65);
		assertRejected(() -> this.fixture.scheduler.enqueue(name, new Payload("x")), "Queue name '" + name + "'",
				"it has 65 characters", NAME_RULE);
	}

	@Test
	void queueNameOf64CharactersIsAccepted() {
		String name = "q".repeat(64);
		assertThat(this.fixture.scheduler.find(name, TaskId.of("any"))).isEmpty();
	}

	@Test
	void queueNameWithBracesIsRejected() {
		assertRejected(() -> this.fixture.scheduler.enqueue("mail{0}", new Payload("x")), "Queue name 'mail{0}'",
				"character '{' at index 4 is not allowed", NAME_RULE);
	}

	@Test
	void queueNameWithWhitespaceIsRejected() {
		assertRejected(() -> this.fixture.scheduler.enqueue("two words", new Payload("x")), "Queue name 'two words'",
				"character ' ' at index 3 is not allowed", NAME_RULE);
	}

	@Test
	void queueNameWithControlCharacterIsRejected() {
		assertRejected(() -> this.fixture.scheduler.enqueue("bell\u0007", new Payload("x")), "Queue name 'bell\\u0007'",
				"character '\\u0007' at index 4 is not allowed", NAME_RULE);
	}

	@Test
	void queueNameWithColonIsRejected() {
		assertRejected(() -> this.fixture.scheduler.enqueue("a:b", new Payload("x")), "Queue name 'a:b'",
				"character ':' at index 1 is not allowed", NAME_RULE);
	}

	@Test
	void invalidQueueNameIsRejectedByCancelRescheduleFindAndDeadLetters() {
		TaskId id = TaskId.of("t1");
		assertRejected(() -> this.fixture.scheduler.cancel("a b", id), "Queue name 'a b'", NAME_RULE);
		assertRejected(() -> this.fixture.scheduler.reschedule("a b", id, Duration.ZERO), "Queue name 'a b'",
				NAME_RULE);
		assertRejected(() -> this.fixture.scheduler.find("a b", id), "Queue name 'a b'", NAME_RULE);
		assertRejected(() -> this.fixture.deadLetters.list("a b", 10), "Queue name 'a b'", NAME_RULE);
		assertRejected(() -> this.fixture.deadLetters.redriveAll("a b"), "Queue name 'a b'", NAME_RULE);
		assertRejected(() -> this.fixture.deadLetters.purge("a b"), "Queue name 'a b'", NAME_RULE);
	}

	@Test
	void queueIndexMembersThatAreNotValidNamesNeverBecomeKeys() {
		// A prefix of its own: the other tests assert that nothing exists under theirs.
		String prefix = this.testRedis.keyPrefix() + "-index";
		QueueIndex index = new QueueIndex(this.fixture.redis, prefix);
		index.register("emails");
		this.fixture.redis.opsForSet().add(prefix + ":queues", "bad}name", "two words", "*", "x".repeat(65), "");
		assertThat(index.queues()).containsExactly("emails");
	}

	// ids

	@Test
	void emptyIdIsRejected() {
		assertRejected(() -> this.fixture.scheduler.schedule(TaskRequest.of("q", new Payload("x")).id("")),
				"Task id '' is invalid", "it has 0 characters", NAME_RULE + ", ':'");
	}

	@Test
	void idOf65CharactersIsRejected() {
		String id = "i".repeat(65);
		assertRejected(() -> this.fixture.scheduler.schedule(TaskRequest.of("q", new Payload("x")).id(id)),
				"Task id '" + id + "'", "it has 65 characters", NAME_RULE);
	}

	@Test
	void idWithBracesIsRejected() {
		assertRejected(() -> this.fixture.scheduler.schedule(TaskRequest.of("q", new Payload("x")).id("{emails:0}")),
				"Task id '{emails:0}'", "character '{' at index 0 is not allowed", NAME_RULE);
	}

	@Test
	void idWithWhitespaceIsRejected() {
		assertRejected(() -> this.fixture.scheduler.schedule(TaskRequest.of("q", new Payload("x")).id("order 42")),
				"Task id 'order 42'", "character ' ' at index 5 is not allowed", NAME_RULE);
	}

	@Test
	void idWithControlCharacterIsRejected() {
		assertRejected(() -> this.fixture.scheduler.schedule(TaskRequest.of("q", new Payload("x")).id("order\n42")),
				"Task id 'order\\u000a42'", "character '\\u000a' at index 5 is not allowed", NAME_RULE);
	}

	// times

	@Test
	void negativeDelayIsRejected() {
		assertRejected(() -> this.fixture.scheduler.schedule("q", new Payload("x"), Duration.ofSeconds(-1)),
				"Delay PT-1S for queue 'q' is negative", "use Duration.ZERO or a positive delay");
	}

	@Test
	void delayReachingPastYear9999IsRejected() {
		Duration delay = Duration.between(Instant.now(), PreparedTask.LATEST).plusDays(1);
		assertRejected(() -> this.fixture.scheduler.schedule("q", new Payload("x"), delay),
				"Delay " + delay + " for queue 'q' is too long",
				"the due time must not be later than 9999-12-31T00:00:00Z");
	}

	@Test
	void delayEndingADayBeforeYear9999IsAccepted() {
		// its own key prefix, so that the other tests can still check that nothing was
		// written under theirs
		StoreSettings settings = StoreFixture.settings(this.testRedis.keyPrefix() + "-far", StoreFixture.LEASE,
				StoreFixture.GRACE);
		try (StoreFixture far = new StoreFixture(this.testRedis, settings)) {
			Duration delay = Duration.between(Instant.now(), PreparedTask.LATEST).minusDays(1);
			TaskId id = far.scheduler.schedule("q", new Payload("x"), delay);
			assertThat(far.scheduler.find("q", id)).hasValueSatisfying((info) -> assertThat(info.dueAt()).isBetween(
					PreparedTask.LATEST.minus(Duration.ofDays(2)), PreparedTask.LATEST.minus(Duration.ofHours(23))));
		}
	}

	@Test
	void hugeDelayIsRejected() {
		Duration delay = Duration.ofSeconds(Long.MAX_VALUE);
		assertRejected(() -> this.fixture.scheduler.schedule("q", new Payload("x"), delay),
				"Delay " + delay + " for queue 'q' is too long");
	}

	@Test
	void instantMinIsRejected() {
		assertRejected(() -> this.fixture.scheduler.schedule("q", new Payload("x"), Instant.MIN),
				"Instant " + Instant.MIN + " for queue 'q' cannot be represented",
				"use an instant between 1970-01-01T00:00:00Z and 9999-12-31T00:00:00Z");
	}

	@Test
	void instantMaxIsRejected() {
		assertRejected(() -> this.fixture.scheduler.schedule("q", new Payload("x"), Instant.MAX),
				"Instant " + Instant.MAX + " for queue 'q' cannot be represented",
				"use an instant between 1970-01-01T00:00:00Z and 9999-12-31T00:00:00Z");
	}

	@Test
	void rescheduleToUnrepresentableTimeIsRejected() {
		TaskId id = TaskId.of("t1");
		assertRejected(() -> this.fixture.scheduler.reschedule("q", id, Instant.MAX), "Instant " + Instant.MAX,
				"cannot be represented");
		assertRejected(() -> this.fixture.scheduler.reschedule("q", id, Duration.ofMillis(-5)),
				"Delay PT-0.005S for queue 'q' is negative");
	}

	// payloads

	@Test
	void payloadWhoseGetterThrowsIsRejected() {
		assertRejected(() -> this.fixture.scheduler.enqueue("q", new Exploding()),
				"Payload of type " + Exploding.class.getName() + " for queue 'q' cannot be written as JSON",
				"no value today");
	}

	@Test
	void selfReferencingPayloadIsRejected() {
		assertRejected(() -> this.fixture.scheduler.enqueue("q", new Loop()),
				"Payload of type " + Loop.class.getName() + " for queue 'q' cannot be written as JSON");
	}

	@Test
	void unserializablePayloadIsRejectedWhenItsDigestIsComputed() {
		assertRejected(
				() -> this.fixture.scheduler
					.schedule(TaskRequest.of("q", new Exploding()).uniqueFor(Duration.ofMinutes(1))),
				"Payload of type " + Exploding.class.getName() + " for queue 'q' cannot be written as JSON",
				"no value today");
	}

	@Test
	void payloadOver64KibIsRejected() {
		Payload big = new Payload("x".repeat(64 * 1024));
		int size = ("{\"text\":\"" + big.text() + "\"}").length();
		assertRejected(() -> this.fixture.scheduler.enqueue("q", big),
				"Payload of type " + Payload.class.getName() + " for queue 'q' is " + size + " bytes as JSON",
				"over the limit of 65536 bytes");
	}

	@Test
	void payloadOfExactly64KibIsAccepted() {
		// its own key prefix, so that the other tests can still check that nothing was
		// written under theirs
		StoreSettings settings = StoreFixture.settings(this.testRedis.keyPrefix() + "-limit", StoreFixture.LEASE,
				StoreFixture.GRACE);
		try (StoreFixture limit = new StoreFixture(this.testRedis, settings)) {
			String text = "x".repeat(64 * 1024 - "{\"text\":\"\"}".length());
			ScheduleResult result = limit.scheduler.submit(TaskRequest.of("q", new Payload(text)));
			assertThat(result.created()).isTrue();
			assertThat(limit.store.claim("q", 1, "n1").tasks().get(0).envelope()).contains(text);
		}
	}

	@Test
	void numberLongerThanTheReaderAllowsIsRejected() {
		// Written without complaint before, then refused by the workers on every
		// delivery.
		assertRejected(() -> this.fixture.scheduler.enqueue("q", new BigInteger("9".repeat(1001))),
				"Payload of type java.math.BigInteger for queue 'q' would be refused by the workers' JSON reader",
				"Number value length (1001) exceeds the maximum allowed (1000",
				"StreamReadConstraints.getMaxNumberLength()");
	}

	@Test
	void propertyNameLongerThanTheReaderAllowsIsRejected() {
		assertRejected(() -> this.fixture.scheduler.enqueue("q", Map.of("n".repeat(60_000), 1)),
				"would be refused by the workers' JSON reader",
				"Name length (60000) exceeds the maximum allowed (50000", "StreamReadConstraints.getMaxNameLength()");
	}

	// headers

	@Test
	void moreHeadersThanTheLimitAreRejected() {
		Map<String, String> headers = new LinkedHashMap<>();
		for (int i = 0; i < 200_000; i++) {
			headers.put("h" + i, "v");
		}
		TaskRequest request = new TaskRequest("q", new Payload("x"), null, null, null, null, null, null, headers);
		assertRejected(() -> this.fixture.scheduler.schedule(request),
				"200000 headers for queue 'q' are over the limit of 64 (delayed-tasks.producer.max-headers)");
	}

	@Test
	void headersOverTheSizeLimitAreRejectedBeforeTheyAreWritten() {
		String value = "v".repeat(20 * 1024 * 1024);
		long start = System.nanoTime();
		assertRejected(
				() -> this.fixture.scheduler.schedule(TaskRequest.of("q", new Payload("x")).header("big", value)),
				"Headers for queue 'q' are at least 20971523 bytes as JSON, over the limit of 16384 bytes",
				"delayed-tasks.producer.max-headers-size");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("counted, not serialized")
			.isLessThan(Duration.ofSeconds(2));
	}

	@Test
	void nullPayloadIsRejected() {
		assertRejected(() -> TaskRequest.of("q", null), "Payload of a task for queue 'q' is null",
				"pass a value, or use TaskRequest.of(queue) for a task without payload");
		assertRejected(() -> this.fixture.scheduler.enqueue("q", null), "Payload of a task for queue 'q' is null");
	}

	// options

	@Test
	void uniqueKeyWithoutUniqueForIsRejected() {
		assertRejected(() -> this.fixture.scheduler.schedule(TaskRequest.of("q", new Payload("x")).uniqueKey("user-7")),
				"Unique key 'user-7' for queue 'q'", "needs uniqueFor(Duration)");
	}

	@Test
	void zeroUniqueForIsRejected() {
		assertRejected(
				() -> this.fixture.scheduler.schedule(TaskRequest.of("q", new Payload("x")).uniqueFor(Duration.ZERO)),
				"uniqueFor PT0S for queue 'q' is invalid", "use a positive duration");
	}

	@Test
	void emptyUniqueKeyIsRejected() {
		assertRejected(
				() -> this.fixture.scheduler
					.schedule(TaskRequest.of("q", new Payload("x")).uniqueKey("").uniqueFor(Duration.ofMinutes(1))),
				"Unique key for queue 'q' is empty");
	}

	@Test
	void maxAttemptsZeroIsRejected() {
		assertRejected(() -> this.fixture.scheduler.schedule(TaskRequest.of("q", new Payload("x")).maxAttempts(0)),
				"maxAttempts 0 for queue 'q' is invalid", "use 1 to 1000");
	}

	@Test
	void headerWithNullValueIsRejected() {
		assertRejected(
				() -> this.fixture.scheduler.schedule(TaskRequest.of("q", new Payload("x")).header("tenant", null)),
				"Header 'tenant'='null' for queue 'q' is invalid", "values non-null");
	}

	@Test
	void scheduleAllWritesNothingWhenAnyRequestIsInvalid() {
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			requests.add(TaskRequest.of("q", new Payload("ok " + i)));
		}
		requests.add(TaskRequest.of("q", new Payload("bad")).maxAttempts(0));
		assertRejected(() -> this.fixture.scheduler.scheduleAll(requests), "maxAttempts 0");
	}

	// Redis unreachable

	@Test
	void unreachableRedisFailsWithTaskStoreExceptionCarryingTheTaskId() throws IOException {
		try (Unreachable unreachable = new Unreachable()) {
			TaskStoreException ex = assertThrowsStoreException(() -> unreachable.scheduler
				.schedule(TaskRequest.of("q", new Payload("x")).id("order-42-reminder")));
			assertThat(ex.getTaskId()).isEqualTo(TaskId.of("order-42-reminder"));
			assertThat(ex).hasMessageContaining("order-42-reminder").hasMessageContaining("'q'");
		}
	}

	@Test
	void unreachableRedisReportsTheGeneratedIdToRetryWith() throws IOException {
		try (Unreachable unreachable = new Unreachable()) {
			TaskStoreException ex = assertThrowsStoreException(
					() -> unreachable.scheduler.enqueue("q", new Payload("x")));
			assertThat(ex.getTaskId()).isNotNull();
			assertThat(ex).hasMessageContaining(ex.getTaskId().value());
		}
	}

	@Test
	void unreachableRedisFailsCancelWithTaskStoreExceptionCarryingTheTaskId() throws IOException {
		try (Unreachable unreachable = new Unreachable()) {
			TaskStoreException ex = assertThrowsStoreException(
					() -> unreachable.scheduler.cancel("q", TaskId.of("t-9")));
			assertThat(ex.getTaskId()).isEqualTo(TaskId.of("t-9"));
			assertThat(ex).hasMessageContaining("cancel.lua").hasMessageContaining("t-9");
		}
	}

	private TaskStoreException assertThrowsStoreException(ThrowingCallable call) {
		long start = System.nanoTime();
		TaskStoreException[] caught = new TaskStoreException[1];
		assertThatExceptionOfType(TaskStoreException.class).isThrownBy(call).satisfies((ex) -> caught[0] = ex);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("fails fast").isLessThan(Duration.ofSeconds(10));
		return caught[0];
	}

	private void assertRejected(ThrowingCallable call, String... messageParts) {
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(call)
			.satisfies((ex) -> assertThat(ex.getMessage()).contains(messageParts));
		assertThat(keysUnderPrefix()).as("nothing written").isEmpty();
	}

	private Set<String> keysUnderPrefix() {
		Set<String> keys = new TreeSet<>();
		try (Cursor<String> cursor = this.fixture.redis
			.scan(ScanOptions.scanOptions().match(this.testRedis.keyPrefix() + ":*").count(1000).build())) {
			cursor.forEachRemaining(keys::add);
		}
		return keys;
	}

	/** A scheduler on a port where no Redis listens. */
	public static final class Unreachable implements AutoCloseable {

		final LettuceConnectionFactory connectionFactory;

		public final RedisDelayedTaskScheduler scheduler;

		public Unreachable() throws IOException {
			int port;
			try (ServerSocket socket = new ServerSocket(0)) {
				port = socket.getLocalPort();
			}
			LettuceClientConfiguration client = LettuceClientConfiguration.builder()
				.commandTimeout(Duration.ofMillis(500))
				.clientOptions(ClientOptions.builder()
					.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofMillis(500)).build())
					.build())
				.build();
			this.connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port),
					client);
			this.connectionFactory.afterPropertiesSet();
			this.connectionFactory.start();
			StringRedisTemplate redis = new StringRedisTemplate(this.connectionFactory);
			StoreSettings settings = StoreFixture.settings("dt", StoreFixture.LEASE, StoreFixture.GRACE);
			this.scheduler = new RedisDelayedTaskScheduler(new StoreScripts(redis), settings,
					new PayloadCodec(JsonMapper.shared(), DataSize.ofKilobytes(64)), new QueueIndex(redis, "dt"),
					(queue) -> 4, 500, new DelayedTaskListener() {
					}, ObservationRegistry.NOOP, null);
		}

		@Override
		public void close() {
			this.connectionFactory.destroy();
		}

	}

	record Payload(String text) {
	}

	/** A bean whose only property cannot be read. */
	public static class Exploding {

		public String getValue() {
			throw new IllegalStateException("no value today");
		}

	}

	/** A bean that contains itself. */
	public static class Loop {

		public Loop getSelf() {
			return this;
		}

		public Map<String, Object> getName() {
			return Map.of("n", 1);
		}

	}

}

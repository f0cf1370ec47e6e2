package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import com.fasterxml.jackson.annotation.JsonValue;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.StoreFixture;
import dev.delayedtasks.internal.store.codec.EnvelopeChecks;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.ScriptCallRecordingTemplate;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code scheduleAll} bounds each script call by envelope bytes as well as by task count,
 * and writes the envelopes of later batches just before they are sent instead of holding
 * every envelope of the call in memory.
 */
@WithRedis
class ScheduleAllBatchingIntegrationTests {

	private final TestRedis testRedis;

	private StoreFixture fixture;

	ScheduleAllBatchingIntegrationTests(TestRedis testRedis) {
		this.testRedis = testRedis;
	}

	@BeforeEach
	void setUp() {
		this.fixture = new StoreFixture(this.testRedis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void eachScriptCallCarriesAtMostBatchBytesOfEnvelopes() {
		List<String> events = new CopyOnWriteArrayList<>();
		RecordingTemplate template = new RecordingTemplate(this.fixture.connectionFactory, events);
		RedisDelayedTaskScheduler scheduler = scheduler(template, 500, DataSize.ofKilobytes(256));
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			requests.add(TaskRequest.of("batch-bytes", "x".repeat(64 * 1024 - 2)).delay(Duration.ofHours(1)));
		}
		List<ScheduleResult> results = scheduler.scheduleAll(requests);
		assertThat(results).hasSize(100).allMatch(ScheduleResult::created);
		// 64 KiB + 13 bytes of envelope each: three fit in 256 KiB, a fourth does not.
		assertThat(template.envelopeBytes).hasSize(34).allMatch((bytes) -> bytes <= 256 * 1024);
		assertThat(template.envelopeBytes.get(0)).isEqualTo(3 * (64 * 1024 + 13));
		assertThat(this.fixture.redis.opsForZSet().size(this.fixture.keys("batch-bytes").sched())).isEqualTo(100);
	}

	@Test
	void theCountBoundStillApplies() {
		RecordingTemplate template = new RecordingTemplate(this.fixture.connectionFactory, new ArrayList<>());
		RedisDelayedTaskScheduler scheduler = scheduler(template, 4, DataSize.ofMegabytes(1));
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			requests.add(TaskRequest.of("batch-count", i));
		}
		scheduler.scheduleAll(requests);
		assertThat(template.tasksPerCall).containsExactly(4, 4, 2);
	}

	@Test
	void aTaskLargerThanBatchBytesGoesInACallOfItsOwn() {
		RecordingTemplate template = new RecordingTemplate(this.fixture.connectionFactory, new ArrayList<>());
		RedisDelayedTaskScheduler scheduler = scheduler(template, 500, DataSize.ofBytes(100));
		scheduler.scheduleAll(List.of(TaskRequest.of("batch-large", "small"),
				TaskRequest.of("batch-large", "x".repeat(1000)), TaskRequest.of("batch-large", "small")));
		assertThat(template.tasksPerCall).containsExactly(1, 1, 1);
	}

	@Test
	void laterBatchesAreWrittenJustBeforeTheyAreSent() {
		List<String> events = new CopyOnWriteArrayList<>();
		RecordingTemplate template = new RecordingTemplate(this.fixture.connectionFactory, events);
		// 1 KiB of envelope per task: two per call.
		RedisDelayedTaskScheduler scheduler = scheduler(template, 500, DataSize.ofBytes(2 * 1024 + 100));
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			requests.add(TaskRequest.of("batch-lazy", new Recorded(i, events)));
		}
		scheduler.scheduleAll(requests);
		// All are validated first; the first call's envelopes are kept, every later
		// batch is written again right before its call.
		assertThat(events).containsExactly("write 0", "write 1", "write 2", "write 3", "write 4", "write 5",
				"call of 2", "write 2", "write 3", "call of 2", "write 4", "write 5", "call of 2");
	}

	@Test
	void anInvalidRequestAfterManyLargeOnesWritesNothing() {
		RecordingTemplate template = new RecordingTemplate(this.fixture.connectionFactory, new ArrayList<>());
		RedisDelayedTaskScheduler scheduler = scheduler(template, 500, DataSize.ofKilobytes(64));
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			requests.add(TaskRequest.of("batch-invalid", "x".repeat(30_000)));
		}
		requests.add(TaskRequest.of("batch-invalid", "x".repeat(70_000)));
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> scheduler.scheduleAll(requests))
			.withMessageContaining("over the limit of 65536 bytes");
		assertThat(template.tasksPerCall).isEmpty();
	}

	private RedisDelayedTaskScheduler scheduler(StringRedisTemplate template, int batchSize, DataSize batchBytes) {
		return new RedisDelayedTaskScheduler(new StoreScripts(template), this.fixture.settings,
				new PayloadCodec(JsonMapper.shared(), DataSize.ofKilobytes(64)), this.fixture.queues, (queue) -> 4,
				batchSize, batchBytes, new DelayedTaskListener() {
				}, ObservationRegistry.NOOP, null);
	}

	/** A payload that records when it is written; its JSON is 1,000 bytes. */
	record Recorded(int index, List<String> events) {

		@JsonValue
		String json() {
			this.events.add("write " + this.index);
			return "x".repeat(998);
		}

	}

	/**
	 * Records, for each {@code enqueue} call, the tasks and envelope bytes it carries.
	 */
	static final class RecordingTemplate extends ScriptCallRecordingTemplate {

		final List<Integer> tasksPerCall = new CopyOnWriteArrayList<>();

		final List<Long> envelopeBytes = new CopyOnWriteArrayList<>();

		private final List<String> events;

		RecordingTemplate(RedisConnectionFactory connectionFactory, List<String> events) {
			super(connectionFactory);
			this.events = events;
		}

		@Override
		protected void onScriptCall(List<String> keys, List<String> args) {
			if (keys.size() > 6 && keys.get(0).endsWith(":sched") && (keys.size() - 6) % 3 == 0) {
				int tasks = (keys.size() - 6) / 3;
				long bytes = 0;
				// ARGV: base, n, layout, fanout, hand-off, then eleven per task, the
				// envelope eighth.
				for (int i = 0; i < tasks; i++) {
					bytes += EnvelopeChecks.utf8Length(args.get(5 + i * 11 + 7));
				}
				this.tasksPerCall.add(tasks);
				this.envelopeBytes.add(bytes);
				this.events.add("call of " + tasks);
			}
		}

	}

}

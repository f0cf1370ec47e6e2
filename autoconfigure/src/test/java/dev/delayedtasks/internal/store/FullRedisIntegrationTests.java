package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.SortedMap;

import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A full Redis ({@code maxmemory} reached, {@code maxmemory-policy noeviction}) refuses
 * new tasks with a {@link TaskStoreException} and writes nothing of them, keeps the tasks
 * it already holds, and takes new ones again once there is room. On a private server,
 * whose memory limit the test changes.
 */
@WithRedis(privateServer = true)
class FullRedisIntegrationTests {

	private static final String QUEUE = "full";

	/** About 1 KiB of JSON per task, so the server fills up in a few hundred calls. */
	private static final String PAYLOAD = "x".repeat(1000);

	/** Room left above the memory in use when the test starts. */
	private static final long HEADROOM = 512 * 1024;

	private TestRedis redis;

	private StoreFixture fixture;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.redis = redis;
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		configSet("maxmemory", "0");
		this.fixture.close();
		this.redis.deleteKeys();
	}

	@Test
	void aFullRedisRefusesNewTasksWithTaskStoreExceptionAndWritesNothingOfThem() {
		PartitionProbe probe = new PartitionProbe(this.fixture, QUEUE);
		// Registers the queue and loads the script, so what follows is the script alone.
		TaskId first = this.fixture.scheduler.schedule(QUEUE, PAYLOAD, Duration.ofHours(1));
		assertThat(config("maxmemory-policy")).isEqualTo("noeviction");
		configSet("maxmemory", Long.toString(usedMemory() + HEADROOM));
		List<TaskId> stored = new ArrayList<>(List.of(first));
		TaskStoreException refused = null;
		for (int i = 0; i < 5000 && refused == null; i++) {
			TaskRequest request = TaskRequest.of(QUEUE, PAYLOAD).id("task-" + i).delay(Duration.ofHours(1));
			try {
				stored.add(this.fixture.scheduler.schedule(request));
			}
			catch (TaskStoreException ex) {
				refused = ex;
			}
		}
		assertThat(refused).as("a schedule call refused by the full Redis").isNotNull();
		System.out.println("full redis: " + stored.size() + " tasks stored, then: " + refused.getMessage());
		assertThat(refused).hasMessageContaining("OOM").hasMessageContaining("'" + QUEUE + "'");
		TaskId refusedId = TaskId.of("task-" + (stored.size() - 1));
		assertThat(refused.getTaskId()).as("the id to retry with").isEqualTo(refusedId);
		assertThat(probe.taskKeys(refusedId.value())).as("keys of the refused task").isEmpty();
		assertThat(probe.sched()).hasSize(stored.size()).doesNotContainKey(refusedId.value());

		// Keep it full whatever Redis frees meanwhile: every kind of call is refused and
		// writes nothing.
		configSet("maxmemory", "1");
		SortedMap<String, String> before = probe.snapshot();
		assertThatExceptionOfType(TaskStoreException.class).isThrownBy(() -> this.fixture.scheduler
			.schedule(TaskRequest.of(QUEUE, PAYLOAD).id(refusedId).delay(Duration.ofHours(1))));
		assertThatExceptionOfType(TaskStoreException.class)
			.isThrownBy(() -> this.fixture.scheduler.enqueue(QUEUE, PAYLOAD));
		assertThatExceptionOfType(TaskStoreException.class).isThrownBy(() -> this.fixture.scheduler
			.schedule(TaskRequest.of(QUEUE, PAYLOAD).uniqueKey("once").uniqueFor(Duration.ofHours(1))));
		assertThatExceptionOfType(TaskStoreException.class).isThrownBy(() -> this.fixture.scheduler.scheduleAll(
				List.of(TaskRequest.of(QUEUE, PAYLOAD), TaskRequest.of(QUEUE, PAYLOAD).delay(Duration.ofMinutes(1)))));
		assertThat(probe.snapshot()).as("the partition after the refused calls").isEqualTo(before);
		assertThat(probe.violations()).isEmpty();
		assertThat(this.fixture.scheduler.find(QUEUE, first)).as("a task stored before").isPresent();

		configSet("maxmemory", "0");
		ScheduleResult retried = this.fixture.scheduler
			.submit(TaskRequest.of(QUEUE, PAYLOAD).id(refusedId).delay(Duration.ofHours(1)));
		assertThat(retried.outcome()).isEqualTo(ScheduleResult.Outcome.CREATED);
		assertThat(probe.sched()).hasSize(stored.size() + 1);
		assertThat(probe.violations()).isEmpty();
	}

	private long usedMemory() {
		Properties info = this.fixture.redis
			.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("memory"));
		assertThat(info).isNotNull();
		return Long.parseLong(info.getProperty("used_memory"));
	}

	private String config(String name) {
		Properties config = this.fixture.redis
			.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().getConfig(name));
		assertThat(config).isNotNull();
		return config.getProperty(name);
	}

	private void configSet(String name, String value) {
		this.fixture.redis.execute((RedisCallback<Void>) (connection) -> {
			connection.serverCommands().setConfig(name, value);
			return null;
		});
	}

}

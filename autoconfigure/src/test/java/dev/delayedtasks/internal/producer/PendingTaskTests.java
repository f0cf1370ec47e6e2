package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.time.Instant;

import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.internal.store.PreparedTask;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The due time of a task in a lane: a waiting task's delay is shortened by its wait; a
 * held task's delay ends at an instant of Redis's time, whatever this machine's clock
 * says.
 */
class PendingTaskTests {

	private static final Duration SKEW = Duration.ofHours(1);

	private final PayloadCodec codec = new PayloadCodec(JsonMapper.shared(), DataSize.ofKilobytes(64));

	private PreparedTask task(Duration delay) {
		return PreparedTask.of(TaskRequest.of("lane", "payload").delay(delay), this.codec, (queue) -> 3);
	}

	@Test
	void aHeldTaskIsDueWhenItsDelayEndsByRedisTimeNotByThisMachinesClock() {
		long submitted = System.nanoTime();
		// Redis's clock one hour ahead of this machine's.
		long redisAtSubmission = System.currentTimeMillis() + SKEW.toMillis();
		RedisClock clock = new RedisClock();
		clock.observe(redisAtSubmission, submitted);
		PendingTask pending = new PendingTask(task(Duration.ofMinutes(5)), submitted);
		pending.held = true;
		PreparedTask sent = pending.delayLeft(submitted + Duration.ofSeconds(3).toNanos(), clock);
		assertThat(sent.absolute()).isTrue();
		assertThat(sent.time()).isEqualTo(redisAtSubmission + Duration.ofMinutes(5).toMillis());
	}

	@Test
	void aWaitingTaskGoesWithWhatIsLeftOfItsDelay() {
		long submitted = System.nanoTime();
		PendingTask pending = new PendingTask(task(Duration.ofMinutes(5)), submitted);
		PreparedTask sent = pending.delayLeft(submitted + Duration.ofSeconds(3).toNanos(), new RedisClock());
		assertThat(sent.absolute()).isFalse();
		assertThat(sent.time()).isEqualTo(Duration.ofMinutes(5).minusSeconds(3).toMillis());
	}

	@Test
	void aHeldTaskIsFoundAsHeldDueByRedisTime() {
		long submitted = System.nanoTime();
		long redisAtSubmission = System.currentTimeMillis() - SKEW.toMillis();
		RedisClock clock = new RedisClock();
		clock.observe(redisAtSubmission, submitted);
		PendingTask pending = new PendingTask(
				PreparedTask.of(TaskRequest.of("lane", "payload").delay(Duration.ofMinutes(5)).maxAttempts(7),
						this.codec, (queue) -> 3),
				submitted);
		TaskInfo info = pending.info(clock);
		assertThat(info.state()).isEqualTo(TaskState.HELD);
		assertThat(info.maxAttempts()).isEqualTo(7);
		assertThat(info.createdAt()).isEqualTo(Instant.ofEpochMilli(redisAtSubmission));
		assertThat(info.dueAt()).isEqualTo(Instant.ofEpochMilli(redisAtSubmission).plus(Duration.ofMinutes(5)));
	}

}

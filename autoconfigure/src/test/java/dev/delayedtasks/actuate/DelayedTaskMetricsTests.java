package dev.delayedtasks.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.actuate.QueueSnapshots;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisQueueStats;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * {@link DelayedTaskMetrics}' listener callbacks on their own, as the completion path
 * calls them; {@link DelayedTaskMetricsIntegrationTests} has the meters of real runs on a
 * real Redis.
 */
class DelayedTaskMetricsTests {

	@Test
	void staleAcknowledgementCallbackCountsByQueueAndHandler() {
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		// Never started: the stale counter does not read the snapshot.
		DelayedTaskMetrics metrics = boundTo(meters);
		TaskContext context = new TaskContext(TaskId.of("t-1"), "direct", 1, 2, Instant.EPOCH, Instant.EPOCH,
				Instant.EPOCH, Map.of(), "token");
		metrics.staleAcknowledgement(context);
		metrics.staleAcknowledgement(context);
		assertThat(meters.get("delayed.tasks.stale").tags("queue", "direct", "handler", "direct-h").counter().count())
			.isEqualTo(2);
	}

	@Test
	void throttledCallbackTimesByQueueAndHandler() {
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		DelayedTaskMetrics metrics = boundTo(meters);
		metrics.throttled("emails", Duration.ofMillis(300));
		metrics.throttled("emails", Duration.ofMillis(200));
		Timer timer = meters.get("delayed.tasks.throttled").tags("queue", "emails", "handler", "emails-h").timer();
		assertThat(timer.count()).isEqualTo(2);
		assertThat(timer.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(500);
	}

	@Test
	void afterCommitFailedCallbackCountsByQueue() {
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		DelayedTaskMetrics metrics = boundTo(meters);
		metrics.afterCommitFailed("orders", TaskId.of("t-1"), new IllegalStateException("down"));
		metrics.afterCommitFailed("orders", TaskId.of("t-2"), new IllegalStateException("down"));
		assertThat(meters.get("delayed.tasks.after.commit.failed").tags("queue", "orders").counter().count())
			.isEqualTo(2);
	}

	/**
	 * Metrics whose handler of a queue is {@code <queue>-h}, on snapshots never started:
	 * the listener callbacks do not read them.
	 */
	private static DelayedTaskMetrics boundTo(SimpleMeterRegistry meters) {
		QueueSnapshots snapshots = new QueueSnapshots(mock(RedisQueueStats.class), mock(QueueIndex.class), Set::of,
				Duration.ofHours(1));
		DelayedTaskMetrics metrics = new DelayedTaskMetrics(snapshots, (queue) -> queue + "-h");
		metrics.bindTo(meters);
		return metrics;
	}

}

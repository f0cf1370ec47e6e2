package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.Map;

import dev.delayedtasks.QueueLimits;
import org.jspecify.annotations.Nullable;

/**
 * A snapshot of one queue partition, read in one script call: counts per state, next
 * deadlines, the timer owner and the monotonic counters.
 *
 * @param queue the queue
 * @param now Redis time of the snapshot, epoch milliseconds
 * @param scheduled tasks waiting for their due time (retries included)
 * @param ready tasks due and waiting for a worker
 * @param active tasks leased to workers
 * @param dead dead letters
 * @param nextDueMs the earliest scheduled due time, or -1
 * @param oldestReadyDueMs the due time of the oldest ready task, or -1
 * @param timerOwner the instance that owns the queue's timer, or {@code null}
 * @param timerTtlMs the owner's remaining timer lease, or a negative value when none
 * @param paused whether the queue is paused
 * @param layoutVersion the stored layout version, or {@code null} before the first write
 * @param limits the queue's flow control in force
 * @param startsInRateWindow leases within its rate limit's window (0 without one)
 * @param heldUntilMs Redis time until which a handler's "slow down" holds the queue, 0
 * when no hold is in force
 * @param counters the counters of the queue's {@code stats} hash, by their stored field
 * names ({@link QueueCounter#field()})
 * @author delayed-tasks
 * @since 0.1.0
 */
public record QueueStats(String queue, long now, long scheduled, long ready, long active, long dead, long nextDueMs,
		long oldestReadyDueMs, @Nullable String timerOwner, long timerTtlMs, boolean paused,
		@Nullable String layoutVersion, QueueLimits limits, long startsInRateWindow, long heldUntilMs,
		Map<String, Long> counters) {

	/**
	 * How long the oldest ready task has waited since its due time.
	 * @return the age, zero when nothing is ready
	 */
	public Duration oldestReadyAge() {
		return (this.oldestReadyDueMs >= 0) ? Duration.ofMillis(Math.max(0, this.now - this.oldestReadyDueMs))
				: Duration.ZERO;
	}

	/**
	 * A counter's value.
	 * @param name the counter's stored field name, for example {@code done}
	 * @return the value, 0 when never counted
	 */
	public long counter(String name) {
		return this.counters.getOrDefault(name, 0L);
	}

	/**
	 * A counter's value.
	 * @param counter the counter
	 * @return the value, 0 when never counted
	 */
	public long counter(QueueCounter counter) {
		return counter(counter.field());
	}

}

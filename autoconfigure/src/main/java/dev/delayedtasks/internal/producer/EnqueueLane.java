package dev.delayedtasks.internal.producer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The calls of one queue in {@link AsyncEnqueue}: whether one is in flight (or a retry is
 * due), what waits for the next, and whether Redis was unreachable at the last try. Its
 * fields and methods are used holding the lane's lock.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class EnqueueLane {

	static final long FIRST_RETRY_MILLIS = 100;

	final String queue;

	final ArrayDeque<PendingTask> waiting = new ArrayDeque<>();

	/**
	 * One call at a time: two measured no faster than one (A/B of the {@code async} and
	 * {@code reactive} benchmarks), and one keeps the batches large.
	 */
	boolean sending;

	boolean outage;

	@Nullable RuntimeException lastFailure;

	long pauseMillis = FIRST_RETRY_MILLIS;

	boolean expiryScheduled;

	EnqueueLane(String queue) {
		this.queue = queue;
	}

	/**
	 * The next call's tasks, up to the batch limits.
	 * @param batchSize the most tasks per call
	 * @param batchBytes the most envelope bytes per call (a larger task goes alone)
	 * @return the tasks, at least one when any wait
	 */
	List<PendingTask> drain(int batchSize, long batchBytes) {
		List<PendingTask> batch = new ArrayList<>(Math.min(batchSize, this.waiting.size()));
		long bytes = 0;
		while (batch.size() < batchSize && !this.waiting.isEmpty()) {
			PendingTask next = this.waiting.peek();
			if (!batch.isEmpty() && bytes + next.task.envelopeBytes() > batchBytes) {
				break;
			}
			bytes += next.task.envelopeBytes();
			next.held |= this.outage;
			batch.add(this.waiting.poll());
		}
		return batch;
	}

	/**
	 * Take out the tasks that waited longer than the outage buffer's wait.
	 * @param now the time, in {@link System#nanoTime()}
	 * @param maxWaitNanos the outage buffer's wait
	 * @return the tasks, oldest first
	 */
	List<PendingTask> expire(long now, long maxWaitNanos) {
		List<PendingTask> expired = new ArrayList<>();
		while (!this.waiting.isEmpty() && now - this.waiting.peek().submitted >= maxWaitNanos) {
			expired.add(this.waiting.poll());
		}
		return expired;
	}

	/**
	 * End the lane's call: every waiting task is taken out, to fail with the call.
	 * @return the tasks that waited
	 */
	List<PendingTask> abandon() {
		List<PendingTask> abandoned = new ArrayList<>(this.waiting);
		this.waiting.clear();
		this.sending = false;
		return abandoned;
	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.internal.store.LatenessBuckets;

/**
 * Counts the lateness of every run this instance starts (its start minus its due time,
 * both Redis time) per queue in {@link LatenessBuckets}, until the
 * {@link QueueHistoryRecorder} takes the counts to Redis. Counting is a few atomic
 * increments on the handler's thread; nothing is sent from there.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public final class LatenessRecorder implements DelayedTaskListener {

	private final Map<String, AtomicLongArray> counts = new ConcurrentHashMap<>();

	@Override
	public void started(TaskContext context) {
		long millis = Duration.between(context.dueAt(), context.startedAt()).toMillis();
		this.counts.computeIfAbsent(context.queue(), (queue) -> new AtomicLongArray(LatenessBuckets.COUNT))
			.incrementAndGet(LatenessBuckets.of(millis));
	}

	/**
	 * The queues whose runs were counted, sent or not.
	 * @return the queues
	 */
	Set<String> queues() {
		return Set.copyOf(this.counts.keySet());
	}

	/**
	 * Take a queue's counts since the last time, leaving zeros.
	 * @param queue the queue
	 * @return the counts per bucket
	 */
	long[] take(String queue) {
		long[] taken = new long[LatenessBuckets.COUNT];
		AtomicLongArray queueCounts = this.counts.get(queue);
		if (queueCounts != null) {
			for (int i = 0; i < taken.length; i++) {
				taken[i] = queueCounts.getAndSet(i, 0);
			}
		}
		return taken;
	}

	/**
	 * Put counts back that could not be sent, to go with the next ones.
	 * @param queue the queue
	 * @param taken the counts taken
	 */
	void giveBack(String queue, long[] taken) {
		AtomicLongArray queueCounts = this.counts.computeIfAbsent(queue,
				(name) -> new AtomicLongArray(LatenessBuckets.COUNT));
		for (int i = 0; i < taken.length; i++) {
			if (taken[i] != 0) {
				queueCounts.addAndGet(i, taken[i]);
			}
		}
	}

}

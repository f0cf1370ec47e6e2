package dev.delayedtasks.internal.producer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import dev.delayedtasks.TaskId;
import org.jspecify.annotations.Nullable;

/**
 * The calls of one queue in {@link AsyncEnqueue}: whether one is in flight (or a retry is
 * due), what it carries, what waits for the next, the tasks withdrawn and still to be
 * cancelled in Redis, and whether Redis was unreachable at the last try. Its fields and
 * methods are used holding the lane's lock.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class EnqueueLane {

	static final long FIRST_RETRY_MILLIS = 100;

	final String queue;

	final ArrayDeque<PendingTask> waiting = new ArrayDeque<>();

	/** The tasks of the call in flight. */
	List<PendingTask> inFlight = List.of();

	/**
	 * Tasks cancelled while held: each is cancelled in Redis by the lane's next call,
	 * sent after every call that may have carried it.
	 */
	final List<PendingTask> withdrawals = new ArrayList<>();

	/**
	 * One call at a time: two measured no faster than one (A/B of the {@code async} and
	 * {@code reactive} benchmarks), and one keeps the batches large.
	 */
	boolean sending;

	boolean outage;

	@Nullable RuntimeException lastFailure;

	long pauseMillis = FIRST_RETRY_MILLIS;

	boolean expiryScheduled;

	/**
	 * Taken out of the map of lanes while idle: a submission that finds it retired looks
	 * the queue's lane up again.
	 */
	boolean retired;

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
		this.inFlight = batch;
		return batch;
	}

	/**
	 * The task with an id that this lane still holds: waiting, or in the call in flight.
	 * @param id the id
	 * @return the task, or {@code null}
	 */
	@Nullable PendingTask find(TaskId id) {
		for (PendingTask pending : this.inFlight) {
			if (!pending.withdrawn && pending.task.id().equals(id)) {
				return pending;
			}
		}
		for (PendingTask pending : this.waiting) {
			if (pending.task.id().equals(id)) {
				return pending;
			}
		}
		return null;
	}

	/**
	 * Withdraw every task with an id that the lane holds (the same id may have been
	 * submitted more than once): taken out of the waiting line, or marked in the call in
	 * flight, whose reply then hands them to {@link #withdrawals}.
	 * @param id the id
	 * @return the tasks withdrawn, empty when the lane holds none with that id
	 */
	List<PendingTask> withdraw(TaskId id) {
		List<PendingTask> withdrawn = new ArrayList<>(1);
		for (PendingTask pending : this.inFlight) {
			if (!pending.withdrawn && pending.task.id().equals(id)) {
				pending.withdrawn = true;
				withdrawn.add(pending);
			}
		}
		for (Iterator<PendingTask> waiting = this.waiting.iterator(); waiting.hasNext();) {
			PendingTask pending = waiting.next();
			if (pending.task.id().equals(id)) {
				waiting.remove();
				pending.withdrawn = true;
				this.withdrawals.add(pending);
				withdrawn.add(pending);
			}
		}
		return withdrawn;
	}

	/**
	 * Whether the lane holds nothing and waits for nothing: no call in flight, no retry
	 * or expiry due, no task waiting or withdrawn.
	 * @return whether it is idle
	 */
	boolean idle() {
		return !this.sending && !this.expiryScheduled && this.waiting.isEmpty() && this.withdrawals.isEmpty()
				&& this.inFlight.isEmpty();
	}

	/**
	 * The call in flight has ended: its withdrawn tasks are to be cancelled in Redis.
	 * @return the tasks of the call that were not withdrawn
	 */
	List<PendingTask> callEnded() {
		List<PendingTask> kept = new ArrayList<>(this.inFlight.size());
		for (PendingTask pending : this.inFlight) {
			if (pending.withdrawn) {
				this.withdrawals.add(pending);
			}
			else {
				kept.add(pending);
			}
		}
		this.inFlight = List.of();
		return kept;
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
	 * Every task the lane holds, taken out: waiting, in flight and withdrawn.
	 * @return the tasks that were neither withdrawn nor stored yet
	 */
	List<PendingTask> takeAll() {
		List<PendingTask> all = new ArrayList<>(this.inFlight.size() + this.waiting.size());
		for (PendingTask pending : this.inFlight) {
			if (!pending.withdrawn) {
				// Handed to the client: it may be stored yet.
				pending.maybeStored = true;
				all.add(pending);
			}
		}
		all.addAll(this.waiting);
		this.waiting.clear();
		return all;
	}

}

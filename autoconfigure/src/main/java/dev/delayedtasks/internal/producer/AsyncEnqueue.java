package dev.delayedtasks.internal.producer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.EnqueueCall;
import dev.delayedtasks.internal.store.PreparedTask;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Stores tasks without blocking the caller: each queue has a lane with at most one
 * {@code enqueue} call in flight on the reactive connection, and what callers submit
 * while it is in flight waits in the lane and goes out in the next call, as many tasks
 * per call as the batch limits allow. A lone, slow caller gets one call per task; a busy
 * one gets calls of many tasks, so Redis runs one script call per batch instead of one
 * per task. Each task's future completes with its own outcome. A task's delay counts from
 * its submission: the time it waited in the lane is taken off before it is sent.
 * <p>
 * When Redis fails a call, the tasks waiting behind it fail with it (none waits for a
 * further command timeout per batch), unless the {@link OutageBuffer} is enabled and
 * Redis was unreachable ({@link RedisOutages}): then the call's tasks go back to the head
 * of the lane, the lane sends them again after a short pause (100 ms, doubling up to 1 s)
 * until Redis answers, and tasks submitted meanwhile wait behind them, in order. A held
 * task fails once it has waited {@code maxWait}; a submission fails at once while
 * {@code maxTasks} tasks are accepted and not yet stored. A call that timed out may still
 * have run: sent again, its tasks come back as existing (the script is idempotent on the
 * task id).
 * <p>
 * The next call of a lane is sent from the thread that completed the previous one (a
 * Redis I/O thread) or from a timer: everything it does there is encoding bytes already
 * prepared, never blocking.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class AsyncEnqueue {

	private static final Log logger = LogFactory.getLog(AsyncEnqueue.class);

	/** Queues with a lane; past that, every call is sent on its own, never held. */
	private static final int MAX_LANES = 1024;

	private static final long LAST_RETRY_MILLIS = 1000;

	private final Sender sender;

	private final BiConsumer<String, ScheduleResult> onStored;

	private final int batchSize;

	private final long batchBytes;

	private final OutageBuffer buffer;

	private final Scheduler timers;

	/** Tasks accepted and not yet stored or failed, in every lane. */
	private final AtomicInteger accepted = new AtomicInteger();

	private final Map<String, EnqueueLane> lanes = new ConcurrentHashMap<>();

	/**
	 * Create the lanes.
	 * @param sender sends one call
	 * @param onStored told of each stored task before its future completes
	 * @param batchSize the most tasks per call
	 * @param batchBytes the most envelope bytes per call (a larger task goes alone)
	 * @param buffer whether and how tasks are held while Redis is unreachable
	 * @param timers runs the retries and the expiry of held tasks
	 */
	AsyncEnqueue(Sender sender, BiConsumer<String, ScheduleResult> onStored, int batchSize, long batchBytes,
			OutageBuffer buffer, Scheduler timers) {
		this.sender = sender;
		this.onStored = onStored;
		this.batchSize = batchSize;
		this.batchBytes = batchBytes;
		this.buffer = buffer;
		this.timers = timers;
	}

	/**
	 * Store a task.
	 * @param task the validated task
	 * @return its result, completed on a Redis I/O thread or a timer
	 */
	CompletableFuture<ScheduleResult> submit(PreparedTask task) {
		if (this.accepted.incrementAndGet() > this.buffer.maxTasks()) {
			this.accepted.decrementAndGet();
			return CompletableFuture.failedFuture(new TaskStoreException(
					"Task " + task.id() + " of queue '" + task.queue() + "' was not stored: " + this.buffer.maxTasks()
							+ " tasks are already waiting to be stored, the most the outage buffer holds"
							+ " (delayed-tasks.producer.outage-buffer.max-tasks)",
					task.id(), null));
		}
		EnqueueLane lane = this.lanes.get(task.queue());
		if (lane == null) {
			if (this.lanes.size() >= MAX_LANES) {
				PendingTask pending = new PendingTask(task, System.nanoTime());
				send(null, List.of(pending));
				return pending.future;
			}
			lane = this.lanes.computeIfAbsent(task.queue(), EnqueueLane::new);
		}
		PendingTask pending;
		List<PendingTask> batch = null;
		synchronized (lane) {
			// Stamped under the lock, so a lane's tasks wait in the order of their
			// stamps.
			pending = new PendingTask(task, System.nanoTime());
			lane.waiting.add(pending);
			if (!lane.sending) {
				lane.sending = true;
				batch = lane.drain(this.batchSize, this.batchBytes);
			}
			else if (this.buffer.enabled()) {
				scheduleExpiry(lane, pending.submitted);
			}
		}
		if (batch != null) {
			send(lane, batch);
		}
		return pending.future;
	}

	/**
	 * Tasks accepted and not yet stored or failed: waiting in a lane, held through an
	 * outage, or in a call in flight.
	 * @return the count
	 */
	int accepted() {
		return this.accepted.get();
	}

	private void send(@Nullable EnqueueLane lane, List<PendingTask> batch) {
		long now = System.nanoTime();
		List<PreparedTask> tasks = new ArrayList<>(batch.size());
		for (PendingTask pending : batch) {
			tasks.add(pending.delayLeft(now));
		}
		Mono<List<EnqueueCall.Outcome>> call;
		try {
			call = this.sender.send(tasks.get(0).queue(), tasks);
		}
		catch (RuntimeException ex) {
			call = Mono.error(ex);
		}
		call.subscribe((outcomes) -> {
			// The next call first: Redis runs it while this thread completes the futures.
			next(lane);
			for (int i = 0; i < batch.size(); i++) {
				EnqueueCall.Outcome outcome = outcomes.get(i);
				PendingTask pending = batch.get(i);
				if (outcome.failure() != null) {
					fail(pending, outcome.failure());
				}
				else {
					ScheduleResult result = outcome.result();
					try {
						this.onStored.accept(pending.task.queue(), result);
					}
					catch (RuntimeException ex) {
						// The task is stored: a listener's failure must not fail its
						// future, nor the futures of the rest of the call.
						logger.warn(
								"A listener failed on task " + result.id() + " of queue '" + pending.task.queue() + "'",
								ex);
					}
					this.accepted.decrementAndGet();
					pending.future.complete(result);
				}
			}
		}, (ex) -> {
			RuntimeException failure = (ex instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException(ex);
			if (lane != null && this.buffer.enabled() && RedisOutages.isOutage(failure)) {
				hold(lane, batch, failure);
				return;
			}
			// Redis failed this call: the tasks that waited for it fail with it instead
			// of going out one batch per command timeout. Later submissions try again.
			List<PendingTask> failed = new ArrayList<>(batch);
			failed.addAll(abandon(lane));
			for (PendingTask pending : failed) {
				fail(pending, EnqueueCoalescer.forTask(failure, pending.task));
			}
		});
	}

	/**
	 * Keep a call's tasks through an outage: back to the head of the lane, in order, to
	 * be sent again after a pause; those that waited too long fail.
	 * @param lane the lane
	 * @param batch the tasks of the call that failed
	 * @param failure why it failed
	 */
	private void hold(EnqueueLane lane, List<PendingTask> batch, RuntimeException failure) {
		long now = System.nanoTime();
		boolean began;
		long pause;
		List<PendingTask> expired;
		synchronized (lane) {
			for (int i = batch.size() - 1; i >= 0; i--) {
				batch.get(i).held = true;
				// Whatever the failure: the client may have written the call, and may
				// write
				// it again when it reconnects, before the reply that failed it.
				batch.get(i).maybeStored = true;
				lane.waiting.addFirst(batch.get(i));
			}
			began = !lane.outage;
			lane.outage = true;
			lane.lastFailure = failure;
			pause = lane.pauseMillis;
			lane.pauseMillis = Math.min(2 * pause, LAST_RETRY_MILLIS);
			expired = lane.expire(now, this.buffer.maxWait().toNanos());
			scheduleExpiry(lane, now);
		}
		if (began) {
			logger.warn("Redis is unreachable: the tasks of queue '" + lane.queue
					+ "' are held in memory until it is back (at most " + this.buffer.maxTasks() + " tasks, each for "
					+ this.buffer.maxWait() + "; lost if this process stops): " + failure.getMessage());
		}
		failExpired(expired, failure);
		this.timers.schedule(() -> retry(lane), pause, TimeUnit.MILLISECONDS);
	}

	/**
	 * Send the lane's held tasks again, unless none is left.
	 * @param lane the lane
	 */
	private void retry(EnqueueLane lane) {
		long now = System.nanoTime();
		List<PendingTask> expired;
		List<PendingTask> batch = null;
		RuntimeException failure;
		synchronized (lane) {
			failure = lane.lastFailure;
			expired = lane.expire(now, this.buffer.maxWait().toNanos());
			if (lane.waiting.isEmpty()) {
				// Still counted as an outage: the next submission is the next try.
				lane.sending = false;
			}
			else {
				batch = lane.drain(this.batchSize, this.batchBytes);
			}
		}
		failExpired(expired, failure);
		if (batch != null) {
			send(lane, batch);
		}
	}

	/**
	 * Fail the oldest waiting task when its wait is over, even while a call of the lane
	 * waits for its command timeout. At most one timer per lane, so while Redis answers
	 * this costs a timer per lane and wait. Called holding the lane's lock.
	 * @param lane the lane
	 * @param now the time, in {@link System#nanoTime()}
	 */
	private void scheduleExpiry(EnqueueLane lane, long now) {
		if (lane.expiryScheduled || lane.waiting.isEmpty()) {
			return;
		}
		lane.expiryScheduled = true;
		long due = lane.waiting.peek().submitted + this.buffer.maxWait().toNanos();
		this.timers.schedule(() -> expireHeld(lane), Math.max(0, due - now), TimeUnit.NANOSECONDS);
	}

	private void expireHeld(EnqueueLane lane) {
		long now = System.nanoTime();
		List<PendingTask> expired;
		RuntimeException failure;
		synchronized (lane) {
			lane.expiryScheduled = false;
			failure = lane.lastFailure;
			expired = lane.expire(now, this.buffer.maxWait().toNanos());
			scheduleExpiry(lane, now);
		}
		failExpired(expired, failure);
	}

	private void failExpired(List<PendingTask> expired, @Nullable RuntimeException failure) {
		for (PendingTask pending : expired) {
			String task = "Task " + pending.task.id() + " of queue '" + pending.task.queue() + "'";
			String wait = " within the outage buffer's wait of " + this.buffer.maxWait()
					+ " (delayed-tasks.producer.outage-buffer.max-wait)";
			// "Not stored" only when no call that carried it can have run.
			String message = pending.maybeStored
					? task + " may have been stored: a call that carried it timed out or"
							+ " lost its connection after it was sent, and Redis did not answer" + wait
							+ "; find it by its id before sending it again (the same id is safe to send again)"
					: task + " was not stored: Redis did not take it" + wait;
			fail(pending, new TaskStoreException(message + ((failure != null) ? ": " + failure.getMessage() : ""),
					pending.task.id(), failure));
		}
	}

	private void fail(PendingTask pending, RuntimeException failure) {
		this.accepted.decrementAndGet();
		pending.future.completeExceptionally(failure);
	}

	/**
	 * End the lane's call: every waiting task is taken out, to fail with the call.
	 * @param lane the lane, or {@code null} for a call without one
	 * @return the tasks that waited
	 */
	private static List<PendingTask> abandon(@Nullable EnqueueLane lane) {
		if (lane == null) {
			return List.of();
		}
		synchronized (lane) {
			return lane.abandon();
		}
	}

	/**
	 * After a call that Redis answered: the next call of the lane, if tasks wait.
	 * @param lane the lane, or {@code null} for a call without one
	 */
	private void next(@Nullable EnqueueLane lane) {
		if (lane == null) {
			return;
		}
		List<PendingTask> batch;
		boolean recovered;
		synchronized (lane) {
			recovered = lane.outage;
			if (recovered) {
				lane.outage = false;
				lane.lastFailure = null;
				lane.pauseMillis = EnqueueLane.FIRST_RETRY_MILLIS;
			}
			if (lane.waiting.isEmpty()) {
				lane.sending = false;
				batch = null;
			}
			else {
				batch = lane.drain(this.batchSize, this.batchBytes);
			}
		}
		if (recovered) {
			logger.info("Redis is reachable again: queue '" + lane.queue + "' sends the tasks it held");
		}
		if (batch != null) {
			send(lane, batch);
		}
	}

	/**
	 * Sends one {@code enqueue} call without blocking.
	 */
	@FunctionalInterface
	interface Sender {

		/**
		 * Store tasks of one queue in one call.
		 * @param queue the queue
		 * @param tasks the tasks
		 * @return one outcome per task, in order
		 */
		Mono<List<EnqueueCall.Outcome>> send(String queue, List<PreparedTask> tasks);

	}

}

package dev.delayedtasks.internal.producer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
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
 * A task the lane still holds is a task of this instance: {@link #held} shows it and
 * {@link #withdraw} takes it back for good. A withdrawn task is never sent again; when a
 * call that carried it may have stored it (the call in flight, or one that failed), the
 * lane cancels it in Redis with its next call, on the same connection after every call
 * that carried it, so the cancel runs after any store of it. {@link #close} gives the
 * lanes a last chance to store what they hold, then fails and reports each task left.
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

	/**
	 * Lanes kept while idle; past that, idle lanes are dropped (a lane with work is never
	 * dropped, and tasks accepted bound those).
	 */
	private static final int MAX_LANES = 1024;

	private static final long LAST_RETRY_MILLIS = 1000;

	private static final long CLOSE_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private final Sender sender;

	private final DelayedTaskListener listener;

	private final int batchSize;

	private final long batchBytes;

	private final OutageBuffer buffer;

	private final Scheduler timers;

	private final RedisClock clock;

	/**
	 * Tasks accepted and not yet stored or failed, in every lane; a withdrawn task counts
	 * until Redis answered its cancel.
	 */
	private final AtomicInteger accepted = new AtomicInteger();

	private final Map<String, EnqueueLane> lanes = new ConcurrentHashMap<>();

	private volatile boolean closed;

	/**
	 * Create the lanes.
	 * @param sender sends one call
	 * @param listener told of each stored task before its future completes, of each
	 * withdrawn task Redis cancelled, and of each task given up
	 * @param batchSize the most tasks per call
	 * @param batchBytes the most envelope bytes per call (a larger task goes alone)
	 * @param buffer whether and how tasks are held while Redis is unreachable
	 * @param timers runs the retries and the expiry of held tasks
	 * @param clock the time of Redis as last read, for the due time of held tasks
	 */
	AsyncEnqueue(Sender sender, DelayedTaskListener listener, int batchSize, long batchBytes, OutageBuffer buffer,
			Scheduler timers, RedisClock clock) {
		this.sender = sender;
		this.listener = listener;
		this.batchSize = batchSize;
		this.batchBytes = batchBytes;
		this.buffer = buffer;
		this.timers = timers;
		this.clock = clock;
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
		PendingTask pending;
		Runnable call = null;
		while (true) {
			EnqueueLane lane = this.lanes.get(task.queue());
			if (lane == null) {
				if (this.lanes.size() >= MAX_LANES) {
					retireIdleLanes();
				}
				lane = this.lanes.computeIfAbsent(task.queue(), EnqueueLane::new);
			}
			synchronized (lane) {
				if (lane.retired) {
					continue;
				}
				// Stamped under the lock, so a lane's tasks wait in the order of their
				// stamps.
				pending = new PendingTask(task, System.nanoTime());
				lane.waiting.add(pending);
				if (!lane.sending) {
					lane.sending = true;
					call = takeCall(lane);
				}
				else if (this.buffer.enabled()) {
					scheduleExpiry(lane, pending.submitted);
				}
				break;
			}
		}
		if (call != null) {
			call.run();
		}
		return pending.future;
	}

	private void retireIdleLanes() {
		for (EnqueueLane lane : this.lanes.values()) {
			synchronized (lane) {
				if (lane.idle()) {
					lane.retired = true;
					this.lanes.remove(lane.queue, lane);
				}
			}
		}
	}

	/**
	 * Tasks accepted and not yet stored or failed: waiting in a lane, held through an
	 * outage, or in a call in flight.
	 * @return the count
	 */
	int accepted() {
		return this.accepted.get();
	}

	/**
	 * A task this instance holds, as {@code find} shows it.
	 * @param queue the queue
	 * @param id the task
	 * @return the task in state {@link dev.delayedtasks.TaskState#HELD}, or empty when no
	 * lane holds it
	 */
	Optional<TaskInfo> held(String queue, TaskId id) {
		EnqueueLane lane = this.lanes.get(queue);
		if (lane == null) {
			return Optional.empty();
		}
		synchronized (lane) {
			PendingTask pending = lane.find(id);
			return (pending != null) ? Optional.of(pending.info(this.clock)) : Optional.empty();
		}
	}

	/**
	 * Take back a task this instance holds: it is never sent again, its future fails with
	 * a {@link CancellationException}, and it is cancelled in Redis after every call that
	 * may have carried it.
	 * @param queue the queue
	 * @param id the task
	 * @return whether a lane held it
	 */
	boolean withdraw(String queue, TaskId id) {
		EnqueueLane lane = this.lanes.get(queue);
		if (lane == null) {
			return false;
		}
		List<PendingTask> withdrawn;
		synchronized (lane) {
			// A lane that holds a task has a call in flight or a retry due, and its next
			// call carries the cancel.
			withdrawn = lane.withdraw(id);
		}
		for (PendingTask pending : withdrawn) {
			pending.future.completeExceptionally(new CancellationException(
					"Task " + id + " of queue '" + queue + "' was cancelled before it was stored"));
		}
		return !withdrawn.isEmpty();
	}

	/**
	 * Stop: wait until every accepted task is stored or failed, at most the buffer's
	 * shutdown wait, then fail each task still held and report it (a warning with the
	 * ids, {@link DelayedTaskListener#storeAbandoned}). Tasks submitted later are sent
	 * but never held.
	 */
	void close() {
		if (this.closed) {
			return;
		}
		long deadline = System.nanoTime() + this.buffer.shutdownWait().toNanos();
		while (this.accepted.get() > 0 && System.nanoTime() - deadline < 0) {
			LockSupport.parkNanos(CLOSE_POLL_NANOS);
		}
		// Held tasks keep being retried until here; from now on nothing is held.
		this.closed = true;
		for (EnqueueLane lane : this.lanes.values()) {
			List<PendingTask> left;
			List<PendingTask> withdrawn;
			RuntimeException failure;
			synchronized (lane) {
				left = lane.takeAll();
				withdrawn = new ArrayList<>(lane.withdrawals);
				lane.withdrawals.clear();
				failure = lane.lastFailure;
			}
			if (!left.isEmpty()) {
				logger.warn("Stopping with " + left.size() + " task(s) of queue '" + lane.queue
						+ "' that Redis has not confirmed after " + this.buffer.shutdownWait()
						+ " (delayed-tasks.producer.outage-buffer.shutdown-wait); their calls fail: " + ids(left));
				for (PendingTask pending : left) {
					abandon(pending, "the application stopped before Redis confirmed it", failure);
				}
			}
			if (!withdrawn.isEmpty()) {
				logger.warn("Stopping before Redis was told to cancel " + withdrawn.size() + " task(s) of queue '"
						+ lane.queue + "' cancelled while held; a call that carried one may have stored it, and then"
						+ " it runs: " + ids(withdrawn));
			}
		}
	}

	private static String ids(List<PendingTask> tasks) {
		return tasks.stream().map((pending) -> pending.task.id().value()).collect(Collectors.joining(", "));
	}

	/**
	 * The lane's next call: first the cancels of withdrawn tasks, then the next batch;
	 * none when nothing waits, and the lane is idle. Called holding the lane's lock, with
	 * {@code sending} set.
	 * @param lane the lane
	 * @return the call to send, outside the lock, or {@code null}
	 */
	private @Nullable Runnable takeCall(EnqueueLane lane) {
		if (!lane.withdrawals.isEmpty()) {
			List<PendingTask> withdrawn = new ArrayList<>(lane.withdrawals);
			lane.withdrawals.clear();
			return () -> cancel(lane, withdrawn);
		}
		if (!lane.waiting.isEmpty()) {
			List<PendingTask> batch = lane.drain(this.batchSize, this.batchBytes);
			return () -> send(lane, batch);
		}
		lane.sending = false;
		return null;
	}

	private void send(EnqueueLane lane, List<PendingTask> batch) {
		long now = System.nanoTime();
		List<PreparedTask> tasks = new ArrayList<>(batch.size());
		for (PendingTask pending : batch) {
			tasks.add(pending.delayLeft(now, this.clock));
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
			// It also settles which of this call's tasks were withdrawn meanwhile.
			next(lane);
			for (int i = 0; i < batch.size(); i++) {
				PendingTask pending = batch.get(i);
				if (pending.withdrawn) {
					continue;
				}
				EnqueueCall.Outcome outcome = outcomes.get(i);
				if (outcome.failure() != null) {
					fail(pending, outcome.failure());
				}
				else {
					stored(pending, outcome.result());
				}
			}
		}, (ex) -> {
			RuntimeException failure = (ex instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException(ex);
			if (this.buffer.enabled() && !this.closed && RedisOutages.isOutage(failure)) {
				hold(lane, batch, failure);
				return;
			}
			// Redis failed this call: the tasks that waited for it fail with it instead
			// of going out one batch per command timeout. Later submissions try again.
			List<PendingTask> failed;
			Runnable cancels;
			synchronized (lane) {
				failed = lane.callEnded();
				failed.addAll(lane.waiting);
				lane.waiting.clear();
				cancels = takeCall(lane);
			}
			for (PendingTask pending : failed) {
				fail(pending, EnqueueCoalescer.forTask(failure, pending.task));
			}
			if (cancels != null) {
				cancels.run();
			}
		});
	}

	private void stored(PendingTask pending, ScheduleResult result) {
		try {
			this.listener.scheduled(pending.task.queue(), result);
		}
		catch (RuntimeException ex) {
			// The task is stored: a listener's failure must not fail its future, nor the
			// futures of the rest of the call.
			logger.warn("A listener failed on task " + result.id() + " of queue '" + pending.task.queue() + "'", ex);
		}
		if (pending.future.complete(result)) {
			this.accepted.decrementAndGet();
		}
	}

	/**
	 * Cancel withdrawn tasks in Redis, one {@code cancel} script each, on the connection
	 * that carried their stores: Redis runs them after those.
	 * @param lane the lane
	 * @param withdrawn the tasks
	 */
	private void cancel(EnqueueLane lane, List<PendingTask> withdrawn) {
		List<TaskId> ids = withdrawn.stream().map((pending) -> pending.task.id()).toList();
		Mono<List<Boolean>> call;
		try {
			call = this.sender.cancel(lane.queue, ids);
		}
		catch (RuntimeException ex) {
			call = Mono.error(ex);
		}
		call.subscribe((cancelled) -> {
			next(lane);
			for (int i = 0; i < ids.size(); i++) {
				this.accepted.decrementAndGet();
				if (cancelled.get(i)) {
					try {
						this.listener.cancelled(lane.queue, ids.get(i));
					}
					catch (RuntimeException ex) {
						logger.warn(
								"A listener failed on cancelled task " + ids.get(i) + " of queue '" + lane.queue + "'",
								ex);
					}
				}
			}
		}, (ex) -> {
			RuntimeException failure = (ex instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException(ex);
			if (!this.closed && RedisOutages.isOutage(failure)) {
				long pause;
				boolean began;
				synchronized (lane) {
					lane.withdrawals.addAll(0, withdrawn);
					began = !lane.outage;
					pause = outage(lane, failure);
				}
				if (began) {
					logger.warn("Redis is unreachable: queue '" + lane.queue + "' cancels " + ids.size()
							+ " withdrawn task(s) when it is back: " + failure.getMessage());
				}
				this.timers.schedule(() -> retry(lane), pause, TimeUnit.MILLISECONDS);
				return;
			}
			logger.warn("Redis failed to cancel " + ids.size() + " task(s) of queue '" + lane.queue
					+ "' cancelled while held; a call that carried one may have stored it, and then it runs: "
					+ ids(withdrawn) + ": " + failure.getMessage());
			this.accepted.addAndGet(-ids.size());
			next(lane);
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
			List<PendingTask> kept = lane.callEnded();
			for (int i = kept.size() - 1; i >= 0; i--) {
				kept.get(i).held = true;
				// Whatever the failure: the client may have written the call, and may
				// write it again when it reconnects, before the reply that failed it.
				kept.get(i).maybeStored = true;
				lane.waiting.addFirst(kept.get(i));
			}
			began = !lane.outage;
			pause = outage(lane, failure);
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
	 * Note that Redis is unreachable for the lane. Called holding the lane's lock.
	 * @param lane the lane
	 * @param failure the call's failure
	 * @return the pause before the next try, in milliseconds
	 */
	private static long outage(EnqueueLane lane, RuntimeException failure) {
		lane.outage = true;
		lane.lastFailure = failure;
		long pause = lane.pauseMillis;
		lane.pauseMillis = Math.min(2 * pause, LAST_RETRY_MILLIS);
		return pause;
	}

	/**
	 * Send the lane's held tasks again, unless none is left.
	 * @param lane the lane
	 */
	private void retry(EnqueueLane lane) {
		long now = System.nanoTime();
		List<PendingTask> expired;
		Runnable call;
		RuntimeException failure;
		synchronized (lane) {
			failure = lane.lastFailure;
			expired = lane.expire(now, this.buffer.maxWait().toNanos());
			// With nothing left the lane is idle, still counted as an outage: the next
			// submission is the next try.
			call = takeCall(lane);
		}
		failExpired(expired, failure);
		if (call != null) {
			call.run();
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
			abandon(pending, "Redis did not answer within the outage buffer's wait of " + this.buffer.maxWait()
					+ " (delayed-tasks.producer.outage-buffer.max-wait)", failure);
		}
	}

	/**
	 * Give a task up: its future fails, and the listener hears of it. The message says
	 * "was not stored" only when no call that carried it can have run.
	 * @param pending the task
	 * @param why why it is given up
	 * @param failure the last failure of its lane, if any
	 */
	private void abandon(PendingTask pending, String why, @Nullable RuntimeException failure) {
		String task = "Task " + pending.task.id() + " of queue '" + pending.task.queue() + "'";
		String message = pending.maybeStored
				? task + " may have been stored: a call that carried it timed out or lost its connection after it"
						+ " was sent, and " + why + "; find it by its id before sending it again (the same id is safe"
						+ " to send again)"
				: task + " was not stored: " + why;
		TaskStoreException abandoned = new TaskStoreException(
				message + ((failure != null) ? ": " + failure.getMessage() : ""), pending.task.id(), failure);
		if (pending.future.isDone()) {
			return;
		}
		// The listener first, as for a stored task: whoever sees the future fail finds
		// the
		// task counted and reported.
		try {
			this.listener.storeAbandoned(pending.task.queue(), pending.task.id(), abandoned);
		}
		catch (RuntimeException ex) {
			logger.warn("A listener failed on abandoned task " + pending.task.id() + " of queue '"
					+ pending.task.queue() + "'", ex);
		}
		if (pending.future.completeExceptionally(abandoned)) {
			this.accepted.decrementAndGet();
		}
	}

	private void fail(PendingTask pending, RuntimeException failure) {
		if (pending.future.completeExceptionally(failure)) {
			this.accepted.decrementAndGet();
		}
	}

	/**
	 * After a call that Redis answered: the call's withdrawn tasks are handed to the
	 * cancels, and the lane's next call goes out, if anything waits.
	 * @param lane the lane
	 */
	private void next(EnqueueLane lane) {
		Runnable call;
		boolean recovered;
		synchronized (lane) {
			lane.callEnded();
			recovered = lane.outage;
			if (recovered) {
				lane.outage = false;
				lane.lastFailure = null;
				lane.pauseMillis = EnqueueLane.FIRST_RETRY_MILLIS;
			}
			call = takeCall(lane);
		}
		if (recovered) {
			logger.info("Redis is reachable again: queue '" + lane.queue + "' sends the tasks it held");
		}
		if (call != null) {
			call.run();
		}
	}

	/**
	 * Sends the calls of a lane without blocking.
	 */
	interface Sender {

		/**
		 * Store tasks of one queue in one call.
		 * @param queue the queue
		 * @param tasks the tasks
		 * @return one outcome per task, in order
		 */
		Mono<List<EnqueueCall.Outcome>> send(String queue, List<PreparedTask> tasks);

		/**
		 * Cancel tasks of one queue, one after another.
		 * @param queue the queue
		 * @param ids the tasks
		 * @return per task, in order, whether it was waiting and is now cancelled
		 */
		Mono<List<Boolean>> cancel(String queue, List<TaskId> ids);

	}

}

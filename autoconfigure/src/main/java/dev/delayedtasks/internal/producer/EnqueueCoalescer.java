package dev.delayedtasks.internal.producer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.EnqueueCall;
import dev.delayedtasks.internal.store.PreparedTask;
import org.jspecify.annotations.Nullable;

/**
 * Lets threads that call {@code schedule} on the same queue at the same time share one
 * {@code enqueue} script call (group commit). A thread that finds no call of its queue
 * under way sends its own task at once, so a lone producer pays nothing for this; threads
 * that arrive while a call is under way wait, and when it returns one of them sends all
 * waiting tasks of the queue (up to the batch limits) in the next call. Each script call
 * stays atomic and each task keeps its own outcome: the script handles the tasks of a
 * call one after another exactly as {@code scheduleAll} does. Redis runs one script call
 * for many tasks instead of one per task, which is what makes many concurrent producers
 * fast.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class EnqueueCoalescer {

	/** Queues that share calls; past that, every call is sent on its own. */
	private static final int MAX_LANES = 1024;

	private final Sender sender;

	private final int batchSize;

	private final long batchBytes;

	private final Map<String, Lane> lanes = new ConcurrentHashMap<>();

	/**
	 * Create a coalescer.
	 * @param sender sends one call
	 * @param batchSize the most tasks per call
	 * @param batchBytes the most envelope bytes per call (a larger task goes alone)
	 */
	EnqueueCoalescer(Sender sender, int batchSize, long batchBytes) {
		this.sender = sender;
		this.batchSize = batchSize;
		this.batchBytes = batchBytes;
	}

	/**
	 * Store a task, alone or with the tasks other threads are storing at the same time.
	 * @param task the validated task
	 * @return its result
	 * @throws TaskStoreException when Redis fails (naming this task)
	 */
	ScheduleResult submit(PreparedTask task) {
		Lane lane = this.lanes.get(task.queue());
		if (lane == null) {
			if (this.lanes.size() >= MAX_LANES) {
				return this.sender.send(task.queue(), List.of(task)).get(0).get();
			}
			lane = this.lanes.computeIfAbsent(task.queue(), (queue) -> new Lane());
		}
		Waiter own = new Waiter(task, Thread.currentThread());
		List<Waiter> batch;
		synchronized (lane) {
			if (lane.sending) {
				lane.waiting.add(own);
				batch = null;
			}
			else {
				lane.sending = true;
				batch = drain(lane, own);
			}
		}
		while (batch == null) {
			own.await();
			if (!own.leads) {
				return own.outcome();
			}
			synchronized (lane) {
				batch = drain(lane, own);
			}
		}
		send(lane, batch);
		return own.outcome();
	}

	/**
	 * The next call's tasks: {@code first}, then waiting ones up to the batch limits.
	 * Called holding the lane's lock.
	 * @param lane the lane
	 * @param first the task of the thread that sends the call
	 * @return the tasks
	 */
	private List<Waiter> drain(Lane lane, Waiter first) {
		List<Waiter> batch = new ArrayList<>(Math.min(this.batchSize, lane.waiting.size() + 1));
		batch.add(first);
		long bytes = first.task.envelopeBytes();
		while (batch.size() < this.batchSize && !lane.waiting.isEmpty()) {
			Waiter next = lane.waiting.peek();
			if (bytes + next.task.envelopeBytes() > this.batchBytes) {
				break;
			}
			bytes += next.task.envelopeBytes();
			batch.add(lane.waiting.poll());
		}
		return batch;
	}

	private void send(Lane lane, List<Waiter> batch) {
		List<PreparedTask> tasks = new ArrayList<>(batch.size());
		for (Waiter waiter : batch) {
			tasks.add(waiter.task);
		}
		try {
			List<EnqueueCall.Outcome> outcomes = this.sender.send(tasks.get(0).queue(), tasks);
			for (int i = 0; i < batch.size(); i++) {
				batch.get(i).outcome = outcomes.get(i);
			}
		}
		catch (RuntimeException ex) {
			for (Waiter waiter : batch) {
				waiter.outcome = new EnqueueCall.Outcome(null, forTask(ex, waiter.task), null);
			}
		}
		finally {
			Waiter next;
			synchronized (lane) {
				next = lane.waiting.poll();
				if (next == null) {
					lane.sending = false;
				}
			}
			if (next != null) {
				next.leads = true;
				next.wake();
			}
			// The first is this thread's own task.
			for (int i = 1; i < batch.size(); i++) {
				batch.get(i).wake();
			}
		}
	}

	/**
	 * The failure of a shared call as the caller of one of its tasks sees it: a
	 * {@link TaskStoreException} names that caller's task.
	 * @param ex the failure of the call
	 * @param task a task of the call
	 * @return the failure for that task
	 */
	static RuntimeException forTask(RuntimeException ex, PreparedTask task) {
		if (ex instanceof TaskStoreException store && store.getTaskId() != null
				&& !task.id().equals(store.getTaskId())) {
			String message = String.valueOf(store.getMessage());
			String named = "(task " + store.getTaskId() + ")";
			String own = "(task " + task.id() + ")";
			return new TaskStoreException(message.contains(named) ? message.replace(named, own) : message + " " + own,
					task.id(), (store.getCause() != null) ? store.getCause() : store);
		}
		return ex;
	}

	/**
	 * Sends one {@code enqueue} call.
	 */
	@FunctionalInterface
	interface Sender {

		/**
		 * Store tasks of one queue in one call.
		 * @param queue the queue
		 * @param tasks the tasks
		 * @return one outcome per task, in order
		 */
		List<EnqueueCall.Outcome> send(String queue, List<PreparedTask> tasks);

	}

	/** The calls of one queue: whether one is under way, and who waits. */
	private static final class Lane {

		private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();

		private boolean sending;

	}

	/** A thread waiting for its task's outcome, or for its turn to send. */
	private static final class Waiter {

		private final PreparedTask task;

		private final Thread thread;

		private volatile EnqueueCall.@Nullable Outcome outcome;

		private volatile boolean leads;

		private volatile boolean woken;

		Waiter(PreparedTask task, Thread thread) {
			this.task = task;
			this.thread = thread;
		}

		void wake() {
			this.woken = true;
			LockSupport.unpark(this.thread);
		}

		void await() {
			boolean interrupted = false;
			while (!this.woken) {
				LockSupport.park(this);
				if (Thread.interrupted()) {
					// The task is in a call that is under way or about to be: its
					// outcome comes, so wait for it and keep the interrupt for later.
					interrupted = true;
				}
			}
			this.woken = false;
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}

		ScheduleResult outcome() {
			EnqueueCall.Outcome result = this.outcome;
			if (result == null) {
				throw new IllegalStateException("Task " + this.task.id() + " has no outcome");
			}
			return result.get();
		}

	}

}

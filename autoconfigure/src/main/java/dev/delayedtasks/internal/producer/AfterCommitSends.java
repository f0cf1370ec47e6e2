package dev.delayedtasks.internal.producer;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.PreparedTask;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Holds tasks that wait for the commit of the caller's Spring-managed transaction
 * ({@link TaskRequest#afterCommit()}), one list per transaction, and sends them when it
 * commits: in one batch per queue, as {@code scheduleAll} would. A rollback drops them;
 * so does the rollback of a nested transaction to its savepoint, for the tasks added
 * since. A transaction started with {@code REQUIRES_NEW} has a list of its own, sent at
 * its own commit.
 * <p>
 * Tasks are sent from {@code afterCompletion} with status committed, as Spring's own
 * {@code @TransactionalEventListener(phase = AFTER_COMMIT)} does: it also runs for tasks
 * added from another synchronization's {@code afterCommit}. The send runs on the thread
 * that commits, after the commit, so a failure can no longer reach the caller: it is
 * logged and reported to {@link DelayedTaskListener#afterCommitFailed}, which the metrics
 * count.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class AfterCommitSends {

	private static final Log logger = LogFactory.getLog(AfterCommitSends.class);

	/** At most this many ids are listed in one log line. */
	private static final int LOGGED_IDS = 10;

	private final boolean byDefault;

	private final Sender sender;

	private final DelayedTaskListener listener;

	private final Dropped dropped;

	/**
	 * Create the holder.
	 * @param byDefault whether requests that do not say otherwise wait for the commit
	 * ({@code delayed-tasks.producer.after-commit})
	 * @param sender sends tasks, reporting each batch that fails
	 * @param listener told about sends that failed
	 * @param dropped told about every held task that will not be stored: rolled back,
	 * cancelled, or not sent
	 */
	AfterCommitSends(boolean byDefault, Sender sender, DelayedTaskListener listener, Dropped dropped) {
		this.byDefault = byDefault;
		this.sender = sender;
		this.listener = listener;
		this.dropped = dropped;
	}

	/**
	 * Whether {@code request} waits for the commit of a transaction now: it asks for it
	 * (or the default does) and a Spring-managed transaction with synchronization is
	 * active on this thread.
	 * @param request the request
	 * @return whether to {@link #defer(PreparedTask) defer} it
	 */
	boolean defers(TaskRequest request) {
		TaskRequest.Sending sending = request.sending();
		if (sending == TaskRequest.Sending.AT_ONCE || (sending == TaskRequest.Sending.DEFAULT && !this.byDefault)) {
			return false;
		}
		return TransactionSynchronizationManager.isSynchronizationActive()
				&& TransactionSynchronizationManager.isActualTransactionActive();
	}

	/**
	 * Hold a validated task until the current transaction completes.
	 * @param task the task, with its envelope
	 * @return the pending result
	 */
	ScheduleResult defer(PreparedTask task) {
		pendingTasks(true).add(task);
		return ScheduleResult.pending(task.id());
	}

	/**
	 * Whether the current transaction holds a task.
	 * @param queue the queue
	 * @param id the task
	 * @return whether a task of that queue and id waits for this thread's commit
	 */
	boolean holds(String queue, TaskId id) {
		PendingTasks pending = pendingTasks(false);
		return pending != null && pending.holds(queue, id);
	}

	/**
	 * Drop a task that the current transaction holds, if it does.
	 * @param queue the queue
	 * @param id the task
	 * @return whether a held task was dropped
	 */
	boolean cancel(String queue, TaskId id) {
		PendingTasks pending = pendingTasks(false);
		boolean cancelled = pending != null && pending.replace(queue, id, null);
		if (cancelled) {
			drop(List.of(new TaskKey(queue, id)), new DelayedTaskException(
					"Task " + id + " of queue '" + queue + "' was cancelled before its transaction committed"));
		}
		return cancelled;
	}

	/**
	 * Change the due time of a task that the current transaction holds, if it does.
	 * @param queue the queue
	 * @param id the task
	 * @param absolute whether {@code time} is an epoch instant rather than a delay
	 * @param time the delay or the instant, in milliseconds
	 * @return whether a held task was changed
	 */
	boolean reschedule(String queue, TaskId id, boolean absolute, long time) {
		PendingTasks pending = pendingTasks(false);
		return pending != null && pending.replace(queue, id, (task) -> task.withDue(absolute, time));
	}

	private @Nullable PendingTasks pendingTasks(boolean create) {
		if (!TransactionSynchronizationManager.isSynchronizationActive()) {
			return null;
		}
		// Not a bound resource: REQUIRES_NEW suspends the outer transaction's
		// synchronizations, not resources bound by others, so this finds the list of the
		// transaction that runs now.
		for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
			if (synchronization instanceof PendingTasks pending && pending.owner == this && !pending.completed) {
				return pending;
			}
		}
		if (!create) {
			return null;
		}
		PendingTasks pending = new PendingTasks(this);
		TransactionSynchronizationManager.registerSynchronization(pending);
		return pending;
	}

	private void send(List<PreparedTask> tasks) {
		this.sender.send(tasks, (queue, batch, failure) -> {
			String ids = batch.stream()
				.limit(LOGGED_IDS)
				.map((task) -> task.id().value())
				.collect(Collectors.joining(", "));
			logger.error("Tasks waiting for their transaction's commit could not be sent after it to queue '" + queue
					+ "' (" + batch.size() + " tasks: " + ids + ((batch.size() > LOGGED_IDS) ? ", ..." : "")
					+ "); they are lost unless scheduled again: " + failure, failure);
			batch.forEach((task) -> report(queue, task.id(), failure));
			drop(batch.stream().map(TaskKey::of).toList(), failure);
		});
	}

	private void drop(List<TaskKey> tasks, Throwable reason) {
		for (TaskKey task : tasks) {
			try {
				this.dropped.dropped(task.queue(), task.id(), reason);
			}
			catch (RuntimeException ex) {
				logger.warn(
						"Could not report the dropped task " + task.id() + " of queue '" + task.queue() + "': " + ex,
						ex);
			}
		}
	}

	private void report(String queue, TaskId id, Throwable failure) {
		// Thrown from here, it would end afterCompletion and leave the other queues'
		// batches unsent.
		try {
			this.listener.afterCommitFailed(queue, id, failure);
		}
		catch (RuntimeException ex) {
			logger.warn("DelayedTaskListener failed on afterCommitFailed of task " + id + " of queue '" + queue + "': "
					+ ex, ex);
		}
	}

	private void reportUnknownOutcome(List<PreparedTask> tasks) {
		DelayedTaskException failure = new DelayedTaskException("The transaction's outcome is unknown (its commit "
				+ "failed part-way), so the tasks waiting for it were not sent");
		logger.error(failure.getMessage() + ": " + tasks.size() + " tasks");
		tasks.forEach((task) -> report(task.queue(), task.id(), failure));
		drop(tasks.stream().map(TaskKey::of).toList(), failure);
	}

	/**
	 * Sends tasks in batches.
	 */
	@FunctionalInterface
	interface Sender {

		/**
		 * Send {@code tasks}, going on after a batch that fails.
		 * @param tasks the tasks
		 * @param onFailure told about each batch that fails
		 */
		void send(List<PreparedTask> tasks, BatchFailure onFailure);

	}

	/**
	 * Told about each held task that will not be stored.
	 */
	@FunctionalInterface
	interface Dropped {

		/**
		 * A held task will not be stored.
		 * @param queue the queue
		 * @param id the task
		 * @param reason why
		 */
		void dropped(String queue, TaskId id, Throwable reason);

	}

	/**
	 * A batch that could not be sent.
	 */
	@FunctionalInterface
	interface BatchFailure {

		/**
		 * A batch failed.
		 * @param queue the queue
		 * @param batch its tasks
		 * @param failure why
		 */
		void failed(String queue, List<PreparedTask> batch, RuntimeException failure);

	}

	/**
	 * The tasks one transaction holds. Used by the thread that runs the transaction only,
	 * as Spring's transaction synchronizations are.
	 */
	private static final class PendingTasks implements TransactionSynchronization {

		private final AfterCommitSends owner;

		/** The tasks, each with the sequence number it was added with. */
		private final List<Held> tasks = new ArrayList<>();

		/** The sequence number each savepoint was created at. */
		private final Map<Object, Long> savepoints = new IdentityHashMap<>();

		private long sequence;

		private boolean completed;

		PendingTasks(AfterCommitSends owner) {
			this.owner = owner;
		}

		void add(PreparedTask task) {
			this.tasks.add(new Held(task, this.sequence++));
		}

		boolean holds(String queue, TaskId id) {
			return this.tasks.stream()
				.anyMatch((held) -> held.task().queue().equals(queue) && held.task().id().equals(id));
		}

		/**
		 * Replace the held task of {@code queue} and {@code id}.
		 * @param queue the queue
		 * @param id the id
		 * @param change the new task, or {@code null} to drop it
		 * @return whether such a task was held
		 */
		boolean replace(String queue, TaskId id, @Nullable UnaryOperator<PreparedTask> change) {
			boolean found = false;
			for (int i = this.tasks.size() - 1; i >= 0; i--) {
				Held held = this.tasks.get(i);
				if (held.task().queue().equals(queue) && held.task().id().equals(id)) {
					found = true;
					if (change == null) {
						this.tasks.remove(i);
					}
					else {
						this.tasks.set(i, new Held(change.apply(held.task()), held.sequence()));
					}
				}
			}
			return found;
		}

		@Override
		public void savepoint(Object savepoint) {
			this.savepoints.put(savepoint, this.sequence);
		}

		@Override
		public void savepointRollback(Object savepoint) {
			// A savepoint not seen was created before this list was registered, that is
			// before any of its tasks: all of them were added after it.
			long since = this.savepoints.getOrDefault(savepoint, 0L);
			List<TaskKey> rolledBack = this.tasks.stream()
				.filter((held) -> held.sequence() >= since)
				.map((held) -> TaskKey.of(held.task()))
				.toList();
			this.tasks.removeIf((held) -> held.sequence() >= since);
			this.owner.drop(rolledBack, new DelayedTaskException(
					"The task's transaction rolled back to a savepoint created before the task was scheduled"));
		}

		@Override
		public void afterCompletion(int status) {
			this.completed = true;
			List<PreparedTask> held = this.tasks.stream().map(Held::task).toList();
			this.tasks.clear();
			if (held.isEmpty()) {
				return;
			}
			if (status == STATUS_COMMITTED) {
				this.owner.send(held);
			}
			else if (status == STATUS_UNKNOWN) {
				this.owner.reportUnknownOutcome(held);
			}
			else {
				if (logger.isDebugEnabled()) {
					logger.debug("Transaction rolled back: " + held.size() + " tasks waiting for its commit dropped");
				}
				this.owner.drop(held.stream().map(TaskKey::of).toList(),
						new DelayedTaskException("The task's transaction rolled back, so the task was not scheduled"));
			}
		}

	}

	private record Held(PreparedTask task, long sequence) {
	}

	private record TaskKey(String queue, TaskId id) {

		static TaskKey of(PreparedTask task) {
			return new TaskKey(task.queue(), task.id());
		}

	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.ExpiredTask;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Calls every {@link DelayedTaskListener}, logging and ignoring what one throws so a
 * listener can never break a run or a completion.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class Listeners implements DelayedTaskListener {

	private static final Log logger = LogFactory.getLog(Listeners.class);

	private final List<DelayedTaskListener> delegates;

	/**
	 * Create a composite.
	 * @param delegates the listeners
	 */
	public Listeners(List<DelayedTaskListener> delegates) {
		this.delegates = List.copyOf(delegates);
	}

	@Override
	public void scheduled(String queue, ScheduleResult result) {
		each((listener) -> listener.scheduled(queue, result));
	}

	@Override
	public void afterCommitFailed(String queue, TaskId id, Throwable failure) {
		each((listener) -> listener.afterCommitFailed(queue, id, failure));
	}

	@Override
	public void storeAbandoned(String queue, TaskId id, TaskStoreException failure) {
		each((listener) -> listener.storeAbandoned(queue, id, failure));
	}

	@Override
	public void cancelled(String queue, TaskId id) {
		each((listener) -> listener.cancelled(queue, id));
	}

	@Override
	public void expired(String queue, TaskId id, Instant expiresAt) {
		each((listener) -> listener.expired(queue, id, expiresAt));
	}

	/**
	 * Tell of the tasks a claim or a timer tick of this instance ended because they
	 * expired: they hear it from this instance only, as the call that found them ran
	 * here.
	 * @param queue the queue
	 * @param tasks the tasks
	 */
	void expired(String queue, List<ExpiredTask> tasks) {
		for (ExpiredTask task : tasks) {
			if (logger.isDebugEnabled()) {
				logger.debug("Task " + task.id() + " of queue '" + queue + "' had not started by its expiry "
						+ task.expiresAt() + " and will not run");
			}
			expired(queue, task.id(), task.expiresAt());
		}
	}

	@Override
	public void started(TaskContext context) {
		each((listener) -> listener.started(context));
	}

	@Override
	public void succeeded(TaskContext context, Duration runTime) {
		each((listener) -> listener.succeeded(context, runTime));
	}

	@Override
	public void retried(TaskContext context, Throwable failure, Instant nextRunAt) {
		each((listener) -> listener.retried(context, failure, nextRunAt));
	}

	@Override
	public void rateLimited(TaskContext context, Duration retryAfter) {
		each((listener) -> listener.rateLimited(context, retryAfter));
	}

	@Override
	public void throttled(String queue, Duration waited) {
		each((listener) -> listener.throttled(queue, waited));
	}

	@Override
	public void deadLettered(TaskContext context, Throwable failure, String reason) {
		each((listener) -> listener.deadLettered(context, failure, reason));
	}

	@Override
	public void staleAcknowledgement(TaskContext context) {
		each((listener) -> listener.staleAcknowledgement(context));
	}

	private void each(Consumer<DelayedTaskListener> call) {
		for (DelayedTaskListener listener : this.delegates) {
			try {
				call.accept(listener);
			}
			catch (Throwable ex) {
				// Any Error too (a stack overflow, an out-of-memory, an internal error):
				// rethrown, it would end a claim before its tasks are held, a batch of
				// outcomes before the failures in it are recorded, or a run before its
				// handler is called. The listener's notification is lost, not the task.
				logger.error("DelayedTaskListener " + listener.getClass().getName() + " failed: " + ex, ex);
			}
		}
	}

}

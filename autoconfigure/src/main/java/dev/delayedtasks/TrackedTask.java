package dev.delayedtasks;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A task scheduled with {@link DelayedTaskScheduler#track(TaskRequest)}: its id, and a
 * future of how it ends, completed in this process when any instance ends it.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class TrackedTask {

	private final String queue;

	private final ScheduleResult scheduled;

	private final CompletableFuture<TaskOutcome> outcome;

	/**
	 * Create a handle.
	 * @param queue the task's queue
	 * @param scheduled what scheduling returned
	 * @param outcome completes with the outcome
	 */
	public TrackedTask(String queue, ScheduleResult scheduled, CompletableFuture<TaskOutcome> outcome) {
		this.queue = queue;
		this.scheduled = scheduled;
		this.outcome = outcome;
	}

	/**
	 * The task's id.
	 * @return the id
	 */
	public TaskId id() {
		return this.scheduled.id();
	}

	/**
	 * The task's queue.
	 * @return the queue
	 */
	public String queue() {
		return this.queue;
	}

	/**
	 * What scheduling returned: created, or an existing or duplicate task tracked
	 * instead.
	 * @return the result
	 */
	public ScheduleResult scheduled() {
		return this.scheduled;
	}

	/**
	 * How the task ends. Completes on a thread of the tracker (chain blocking work with
	 * an executor), or fails with a {@link TaskStoreException} when no outcome came
	 * within {@code delayed-tasks.results.tracked-retention}.
	 * @return a copy of the future, so that completing it changes nothing
	 */
	public CompletableFuture<TaskOutcome> outcome() {
		return this.outcome.copy();
	}

	/**
	 * Wait for the task to end.
	 * @param timeout the longest wait
	 * @return the outcome, or empty when the task has not ended within the timeout
	 * @throws TaskStoreException when the outcome could not be read
	 */
	public Optional<TaskOutcome> await(Duration timeout) {
		try {
			return Optional.of(this.outcome.get(timeout.toNanos(), TimeUnit.NANOSECONDS));
		}
		catch (TimeoutException ex) {
			return Optional.empty();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return Optional.empty();
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException runtime) {
				throw runtime;
			}
			throw new TaskStoreException("Could not learn how task " + id() + " of queue '" + this.queue + "' ended",
					id(), ex.getCause());
		}
	}

}

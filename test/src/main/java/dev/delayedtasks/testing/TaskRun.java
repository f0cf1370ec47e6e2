package dev.delayedtasks.testing;

import java.time.Instant;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import org.jspecify.annotations.Nullable;

/**
 * One run of a task's handler during a test, as {@link DelayedTasksTester} recorded it.
 *
 * @param context the run's context (id, queue, attempt, deliveries, due time, headers)
 * @param outcome how the run ended, or {@link Outcome#RUNNING}
 * @param failure what the handler threw, for {@link Outcome#RETRIED} and
 * {@link Outcome#DEAD_LETTERED}
 * @param deadLetterReason the {@link dev.delayedtasks.FailureReason} value of a dead
 * letter
 * @param nextRunAt when a retried task runs again, in the queue's (possibly advanced)
 * Redis time
 * @author delayed-tasks
 * @since 0.1.0
 */
public record TaskRun(TaskContext context, Outcome outcome, @Nullable Throwable failure,
		@Nullable String deadLetterReason, @Nullable Instant nextRunAt) {

	/**
	 * The task.
	 * @return the task's id
	 */
	public TaskId id() {
		return this.context.id();
	}

	/**
	 * The queue.
	 * @return the queue
	 */
	public String queue() {
		return this.context.queue();
	}

	/**
	 * The attempt: 1 for the first run, 2 for the first retry.
	 * @return the attempt
	 */
	public int attempt() {
		return this.context.attempt();
	}

	@Override
	public String toString() {
		return "TaskRun[" + queue() + "/" + id() + " attempt " + attempt() + ": " + this.outcome
				+ ((this.failure != null) ? " (" + this.failure + ")" : "")
				+ ((this.deadLetterReason != null) ? " reason " + this.deadLetterReason : "")
				+ ((this.nextRunAt != null) ? " next run at " + this.nextRunAt : "") + "]";
	}

	/**
	 * How a run ended.
	 */
	public enum Outcome {

		/** The handler is running, or its outcome is being written to Redis. */
		RUNNING,

		/** The handler returned; the task is completed and deleted. */
		SUCCEEDED,

		/** The handler failed; the task runs again at {@link TaskRun#nextRunAt()}. */
		RETRIED,

		/** The handler failed for good; the task is a dead letter. */
		DEAD_LETTERED,

		/** Another worker had taken the task over: the task ran twice. */
		STALE,

		/**
		 * The run ended without an outcome the listeners hear: the task was cancelled
		 * while it ran, its data was deleted (for example by
		 * {@link DelayedTasksTester#clear()}), or it was corrupt.
		 */
		ENDED_UNRECORDED

	}

}

package dev.delayedtasks;

import java.time.Duration;
import java.time.Instant;

/**
 * Callbacks on the life of tasks, for alerting and metrics. Every method has an empty
 * default; implement the ones you need and declare the listener as a bean. Listeners run
 * on the library's threads: keep them fast and never let them throw (exceptions are
 * logged and ignored).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface DelayedTaskListener {

	/**
	 * A task was stored.
	 * @param queue the queue
	 * @param result what the scheduler did
	 */
	default void scheduled(String queue, ScheduleResult result) {
	}

	/**
	 * A task whose send waited for its transaction's commit
	 * ({@link TaskRequest#afterCommit()}) could not be stored after the commit: Redis
	 * failed or could not be reached. The caller was told
	 * {@link ScheduleResult.Outcome#PENDING PENDING} and is not told otherwise, so this
	 * is the place to alert or to record the task for a retry. A timeout leaves it
	 * unknown whether Redis stored the task: scheduling the id again is safe, as it
	 * returns the existing task.
	 * @param queue the queue
	 * @param id the task's id
	 * @param failure why the send failed
	 */
	default void afterCommitFailed(String queue, TaskId id, Throwable failure) {
	}

	/**
	 * An asynchronous call ({@code scheduleAsync}, {@code submitAsync}, the reactive
	 * {@code schedule}, {@code enqueue} and {@code submit}) gave its task up before Redis
	 * confirmed it: the outage buffer's {@code max-wait} ended, or the application
	 * stopped while the task was still held. The caller's future failed with the same
	 * {@link TaskStoreException}; its message says whether the task was not stored or may
	 * have been (a call that carried it may have run), and it carries the id to look the
	 * task up with {@code find} before sending it again.
	 * @param queue the queue
	 * @param id the task's id
	 * @param failure why it was given up
	 */
	default void storeAbandoned(String queue, TaskId id, TaskStoreException failure) {
	}

	/**
	 * A scheduled or ready task was cancelled.
	 * @param queue the queue
	 * @param id the task
	 */
	default void cancelled(String queue, TaskId id) {
	}

	/**
	 * A task had not started by its expiry, so it will never run: it was kept as a dead
	 * letter with reason {@link FailureReason#EXPIRED expired}, or deleted
	 * ({@code delayed-tasks.dead-letter.keep-expired}). Told by the instance whose
	 * dispatcher found it.
	 * @param queue the queue
	 * @param id the task
	 * @param expiresAt its expiry, Redis time
	 * @since 0.1.0
	 */
	default void expired(String queue, TaskId id, Instant expiresAt) {
	}

	/**
	 * A handler is about to run a task.
	 * @param context the run
	 */
	default void started(TaskContext context) {
	}

	/**
	 * A handler returned normally.
	 * @param context the run
	 * @param runTime how long the handler ran
	 */
	default void succeeded(TaskContext context, Duration runTime) {
	}

	/**
	 * A handler failed and the task will run again.
	 * @param context the run
	 * @param failure what the handler threw
	 * @param nextRunAt when it runs again, Redis time
	 */
	default void retried(TaskContext context, Throwable failure, Instant nextRunAt) {
	}

	/**
	 * A handler threw {@link RateLimitedException}: the task went back to the head of its
	 * queue without spending an attempt, and the queue is held.
	 * @param context the run
	 * @param retryAfter how long the queue is held, from when Redis recorded it
	 */
	default void rateLimited(TaskContext context, Duration retryAfter) {
	}

	/**
	 * This instance's dispatcher of the queue waited for the queue's flow control while
	 * tasks were ready: for its rate window to have room, for a handler's hold to end,
	 * or, at the global concurrency, for a lease to end. Called after each wait, on the
	 * dispatcher's thread: keep it short.
	 * @param queue the queue
	 * @param waited how long it waited
	 */
	default void throttled(String queue, Duration waited) {
	}

	/**
	 * A task failed for good and was moved to the dead letters.
	 * @param context the run
	 * @param failure what the handler threw
	 * @param reason why it was dead-lettered: the {@link FailureReason#value() value} of
	 * a {@link FailureReason}, for example {@code retries-exhausted}
	 */
	default void deadLettered(TaskContext context, Throwable failure, String reason) {
	}

	/**
	 * A worker's completion was rejected because another worker owns the task now: the
	 * task ran twice.
	 * @param context the run
	 */
	default void staleAcknowledgement(TaskContext context) {
	}

}

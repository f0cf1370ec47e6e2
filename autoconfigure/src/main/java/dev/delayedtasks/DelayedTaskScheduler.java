package dev.delayedtasks;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Schedules tasks to run later on a queue, and cancels, reschedules and finds them. Due
 * times are Redis time: a delay is added to Redis's clock and an {@link Instant} is
 * compared with it, so the clocks of application servers never decide when a task runs.
 * <p>
 * Ids make scheduling idempotent <em>while the task exists</em>: scheduling an id again
 * returns the existing task. Completed tasks are deleted, so scheduling the same id after
 * the task ran creates a new task.
 * <p>
 * Every method throws {@link InvalidTaskRequestException} for invalid input (before
 * writing anything) and {@link TaskStoreException} when Redis cannot be reached. The
 * {@code ...Async} methods return a {@link CompletableFuture} at once and fail it with
 * the same exceptions instead.
 * <p>
 * Inside a Spring-managed transaction, a request made with
 * {@link TaskRequest#afterCommit()} (or every request, with
 * {@code delayed-tasks.producer.after-commit=true}) is validated and serialized at the
 * call but sent only when the transaction commits, and dropped when it rolls back; the
 * {@code ...Async} methods hold it the same way and return a completed future with a
 * {@link ScheduleResult#pending() pending} result. {@code cancel}, {@code reschedule} and
 * {@code find} act on Redis at once: they report what Redis holds, which a call deferred
 * to the commit could not.
 *
 * @author delayed-tasks
 * @since 0.1.0
 * @see DeadLetters
 */
public interface DelayedTaskScheduler {

	/**
	 * Run {@code payload} on {@code queue} after {@code delay}.
	 * @param queue the queue
	 * @param payload the payload, serialized to JSON
	 * @param delay the delay, zero or positive
	 * @return the new task's id
	 */
	default TaskId schedule(String queue, Object payload, Duration delay) {
		return schedule(TaskRequest.of(queue, payload).delay(delay));
	}

	/**
	 * Run {@code payload} on {@code queue} at {@code runAt} (at once if that is past).
	 * @param queue the queue
	 * @param payload the payload, serialized to JSON
	 * @param runAt the instant
	 * @return the new task's id
	 */
	default TaskId schedule(String queue, Object payload, Instant runAt) {
		return schedule(TaskRequest.of(queue, payload).at(runAt));
	}

	/**
	 * Run {@code payload} on {@code queue} as soon as a worker is free.
	 * @param queue the queue
	 * @param payload the payload, serialized to JSON
	 * @return the new task's id
	 */
	default TaskId enqueue(String queue, Object payload) {
		return schedule(TaskRequest.of(queue, payload));
	}

	/**
	 * Schedule a request with all its options.
	 * @param request the request
	 * @return the id of the task that stands for the request (an existing one for a known
	 * id or unique key)
	 */
	default TaskId schedule(TaskRequest request) {
		return submit(request).id();
	}

	/**
	 * Schedule a request and say whether it created a task.
	 * @param request the request
	 * @return the id and whether it was created, existed, or was a duplicate
	 */
	ScheduleResult submit(TaskRequest request);

	/**
	 * Schedule many requests with one round trip per queue and batch (batches are bounded
	 * by task count and by bytes, so no script call holds Redis for long). All requests
	 * are validated before anything is written. Batches are written one after another:
	 * when one fails with a {@link TaskStoreException}, earlier ones may be stored, so
	 * requests need caller-supplied ids for a retry to be free of duplicates.
	 * <p>
	 * Inside a transaction, each request waits for the commit or not as it says (or as
	 * the application's default says): those that wait are
	 * {@link ScheduleResult#pending() pending} in the results and sent at the commit, in
	 * one batch per queue with the transaction's other waiting tasks; the others are sent
	 * at once.
	 * @param requests the requests
	 * @return one result per request, in order
	 */
	List<ScheduleResult> scheduleAll(Collection<TaskRequest> requests);

	/**
	 * Cancel a task that is scheduled or ready. A running task is asked to stop: it is
	 * not retried, and it is deleted when its run ends. Inside a transaction it acts at
	 * once, and also drops a task of this id that the transaction holds for its commit.
	 * @param queue the queue
	 * @param id the task
	 * @return {@code true} if it was scheduled or ready (or held for the commit) and is
	 * gone now
	 */
	boolean cancel(String queue, TaskId id);

	/**
	 * Move a scheduled or ready task to a new due time, {@code delay} from Redis's now.
	 * Inside a transaction it acts at once, and also moves a task of this id that the
	 * transaction holds for its commit (its delay then counts from when it is sent).
	 * @param queue the queue
	 * @param id the task
	 * @param delay the delay, zero or positive
	 * @return {@code true} if it was scheduled or ready and was moved
	 */
	boolean reschedule(String queue, TaskId id, Duration delay);

	/**
	 * Move a scheduled or ready task to a new due time. Inside a transaction it acts at
	 * once, and also moves a task of this id that the transaction holds for its commit.
	 * @param queue the queue
	 * @param id the task
	 * @param runAt the new due time
	 * @return {@code true} if it was scheduled or ready and was moved
	 */
	boolean reschedule(String queue, TaskId id, Instant runAt);

	/**
	 * Look a task up.
	 * @param queue the queue
	 * @param id the task
	 * @return the task, or empty when it does not exist (never scheduled, completed,
	 * cancelled or purged, or still held for a transaction's commit)
	 */
	Optional<TaskInfo> find(String queue, TaskId id);

	/**
	 * Schedule a task and track it: the handle's future completes, in this process, when
	 * any instance ends the task (succeeded, dead-lettered, cancelled or expired), with
	 * its runs, end time, error or the handler's return value. The outcome is recorded in
	 * the script that ends the task and kept for at least
	 * {@code delayed-tasks.results.tracked-retention}, so a brief disconnection of this
	 * process loses nothing. A request that finds an existing task (same id) or a
	 * duplicate (same unique key) tracks that task.
	 * @param request the request
	 * @return the handle
	 * @throws InvalidTaskRequestException for invalid input, before anything is written
	 * @throws TaskStoreException if Redis fails
	 * @since 0.1.0
	 */
	TrackedTask track(TaskRequest request);

	/**
	 * How a task ended, if its outcome is kept: for
	 * {@code delayed-tasks.results.retention} after the end (per queue overridable), and
	 * for tracked tasks. Read from Redis, so any instance sees it, also after the
	 * producer restarted.
	 * @param queue the queue
	 * @param id the task
	 * @return the outcome, empty when the task has not ended or its outcome is not kept
	 * @throws TaskStoreException if Redis fails
	 * @since 0.1.0
	 */
	Optional<TaskOutcome> outcome(String queue, TaskId id);

	/**
	 * Wait for a task to end, whoever scheduled it: a live task is tracked from now on,
	 * an ended one answers with its kept outcome.
	 * @param queue the queue
	 * @param id the task
	 * @param timeout the longest wait
	 * @return the outcome; empty when the task did not end within the timeout, does not
	 * exist, or ended without keeping its outcome
	 * @throws TaskStoreException if Redis fails
	 * @since 0.1.0
	 */
	Optional<TaskOutcome> awaitOutcome(String queue, TaskId id, Duration timeout);

	/**
	 * A handle on one queue and its payload type, which checks the queue name once and
	 * each payload's type, and the payload type against the queue's handler when this
	 * application has one. Cheap to make; keep it in a field.
	 * @param <T> the payload type
	 * @param queue the queue
	 * @param payloadType the type of its payloads
	 * @return the handle
	 * @throws InvalidTaskRequestException if the queue name is invalid or the queue's
	 * handler cannot take payloads of that type
	 */
	default <T> TaskQueue<T> queue(String queue, Class<T> payloadType) {
		return TaskQueue.of(this, queue, payloadType, (name, type) -> true);
	}

	// Non-blocking variants. Each returns at once; the future completes when Redis has
	// answered, on a Redis I/O thread, so what a caller chains to it must not block
	// (use the *Async methods of CompletableFuture with an executor for blocking work).
	// Invalid input fails the future with InvalidTaskRequestException before anything
	// is sent; a Redis failure fails it with TaskStoreException. These defaults run the
	// blocking method on the calling thread; the Redis implementation does not block.

	/**
	 * Run {@code payload} on {@code queue} after {@code delay}, without blocking.
	 * @param queue the queue
	 * @param payload the payload, serialized to JSON
	 * @param delay the delay, zero or positive
	 * @return the new task's id, when it is stored
	 * @since 0.1.0
	 */
	default CompletableFuture<TaskId> scheduleAsync(String queue, Object payload, Duration delay) {
		try {
			return scheduleAsync(TaskRequest.of(queue, payload).delay(delay));
		}
		catch (InvalidTaskRequestException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Run {@code payload} on {@code queue} at {@code runAt}, without blocking.
	 * @param queue the queue
	 * @param payload the payload, serialized to JSON
	 * @param runAt the instant
	 * @return the new task's id, when it is stored
	 * @since 0.1.0
	 */
	default CompletableFuture<TaskId> scheduleAsync(String queue, Object payload, Instant runAt) {
		try {
			return scheduleAsync(TaskRequest.of(queue, payload).at(runAt));
		}
		catch (InvalidTaskRequestException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Schedule a request with all its options, without blocking.
	 * @param request the request
	 * @return the id of the task that stands for the request, when it is stored
	 * @since 0.1.0
	 */
	default CompletableFuture<TaskId> scheduleAsync(TaskRequest request) {
		return submitAsync(request).thenApply(ScheduleResult::id);
	}

	/**
	 * Schedule a request and say whether it created a task, without blocking.
	 * @param request the request
	 * @return the id and whether it was created, existed, or was a duplicate
	 * @since 0.1.0
	 */
	default CompletableFuture<ScheduleResult> submitAsync(TaskRequest request) {
		return completed(() -> submit(request));
	}

	/**
	 * Schedule many requests without blocking; see {@link #scheduleAll(Collection)}.
	 * @param requests the requests
	 * @return one result per request, in order
	 * @since 0.1.0
	 */
	default CompletableFuture<List<ScheduleResult>> scheduleAllAsync(Collection<TaskRequest> requests) {
		return completed(() -> scheduleAll(requests));
	}

	/**
	 * Cancel a task without blocking; see {@link #cancel(String, TaskId)}.
	 * @param queue the queue
	 * @param id the task
	 * @return {@code true} if it was scheduled or ready and is gone now
	 * @since 0.1.0
	 */
	default CompletableFuture<Boolean> cancelAsync(String queue, TaskId id) {
		return completed(() -> cancel(queue, id));
	}

	/**
	 * Move a task to a new due time, {@code delay} from Redis's now, without blocking.
	 * @param queue the queue
	 * @param id the task
	 * @param delay the delay, zero or positive
	 * @return {@code true} if it was scheduled or ready and was moved
	 * @since 0.1.0
	 */
	default CompletableFuture<Boolean> rescheduleAsync(String queue, TaskId id, Duration delay) {
		return completed(() -> reschedule(queue, id, delay));
	}

	/**
	 * Move a task to a new due time without blocking.
	 * @param queue the queue
	 * @param id the task
	 * @param runAt the new due time
	 * @return {@code true} if it was scheduled or ready and was moved
	 * @since 0.1.0
	 */
	default CompletableFuture<Boolean> rescheduleAsync(String queue, TaskId id, Instant runAt) {
		return completed(() -> reschedule(queue, id, runAt));
	}

	/**
	 * Look a task up without blocking.
	 * @param queue the queue
	 * @param id the task
	 * @return the task, or empty when it does not exist
	 * @since 0.1.0
	 */
	default CompletableFuture<Optional<TaskInfo>> findAsync(String queue, TaskId id) {
		return completed(() -> find(queue, id));
	}

	private static <T> CompletableFuture<T> completed(Supplier<T> call) {
		try {
			return CompletableFuture.completedFuture(call.get());
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

}

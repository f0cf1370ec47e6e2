package dev.delayedtasks;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

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
 * writing anything) and {@link TaskStoreException} when Redis cannot be reached.
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
	 * @param requests the requests
	 * @return one result per request, in order
	 */
	List<ScheduleResult> scheduleAll(Collection<TaskRequest> requests);

	/**
	 * Cancel a task that is scheduled or ready. A running task is asked to stop: it is
	 * not retried, and it is deleted when its run ends.
	 * @param queue the queue
	 * @param id the task
	 * @return {@code true} if it was scheduled or ready and is gone now
	 */
	boolean cancel(String queue, TaskId id);

	/**
	 * Move a scheduled or ready task to a new due time, {@code delay} from Redis's now.
	 * @param queue the queue
	 * @param id the task
	 * @param delay the delay, zero or positive
	 * @return {@code true} if it was scheduled or ready and was moved
	 */
	boolean reschedule(String queue, TaskId id, Duration delay);

	/**
	 * Move a scheduled or ready task to a new due time.
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
	 * cancelled or purged)
	 */
	Optional<TaskInfo> find(String queue, TaskId id);

}

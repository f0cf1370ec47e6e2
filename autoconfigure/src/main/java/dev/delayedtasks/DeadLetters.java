package dev.delayedtasks;

import java.util.List;

/**
 * The tasks of a queue that failed for good: list them, run them again, or delete them.
 * Dead letters are also trimmed by age and count (see
 * {@code delayed-tasks.dead-letter.*}), when a failure dead-letters a task and on a
 * schedule.
 *
 * @author delayed-tasks
 * @since 0.1.0
 * @see DelayedTaskScheduler
 */
public interface DeadLetters {

	/**
	 * The newest dead letters of a queue, newest first.
	 * @param queue the queue
	 * @param limit the most to return
	 * @return the dead letters
	 */
	List<DeadLetter> list(String queue, int limit);

	/**
	 * How many dead letters a queue holds.
	 * @param queue the queue
	 * @return the count
	 */
	long count(String queue);

	/**
	 * Make one dead letter ready to run again, with its failure count reset. An expiry
	 * that has passed is dropped, so the task runs; one still ahead is kept and holds.
	 * @param queue the queue
	 * @param id the task
	 * @return {@code true} if it was a dead letter and is ready now
	 */
	boolean redrive(String queue, TaskId id);

	/**
	 * Make every dead letter of a queue ready to run again (corrupt ones, which cannot
	 * run, stay), their expiries treated as by {@link #redrive(String, TaskId)}.
	 * @param queue the queue
	 * @return how many were redriven
	 */
	long redriveAll(String queue);

	/**
	 * Delete every dead letter of a queue.
	 * @param queue the queue
	 * @return how many were deleted
	 */
	long purge(String queue);

}

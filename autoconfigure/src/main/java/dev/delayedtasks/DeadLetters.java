package dev.delayedtasks;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

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
	 * Make one dead letter ready to run again with a new payload, its headers kept: for a
	 * payload its handler can no longer read (a field whose type changed, a value it
	 * refuses), mended by hand. The payload is encoded as scheduling encodes one, under
	 * the same size limit. The replacement and the redrive are one step, and they happen
	 * only while the task is still the dead letter its caller read ({@code deadAt}): a
	 * dead letter redriven by someone else since (and perhaps dead again, with another
	 * payload) is left alone.
	 * @param queue the queue
	 * @param id the task
	 * @param deadAt when it was dead-lettered, as read ({@link DeadLetter#deadAt()})
	 * @param payload the new payload
	 * @return {@code true} if it was that dead letter and is ready now with the new
	 * payload; {@code false} when it is not a dead letter, has no payload, or is no
	 * longer the dead letter of {@code deadAt} (read it again)
	 * @since 0.3.0
	 */
	boolean redrive(String queue, TaskId id, Instant deadAt, @Nullable Object payload);

	/**
	 * When a task was dead-lettered, the version
	 * {@link #redrive(String, TaskId, Instant, Object)} compares.
	 * @param queue the queue
	 * @param id the task
	 * @return when it was dead-lettered, or empty when it is not a dead letter
	 * @since 0.3.0
	 */
	Optional<Instant> deadAt(String queue, TaskId id);

	/**
	 * The payload of a dead letter as JSON, to inspect or mend (see
	 * {@link #redrive(String, TaskId, Instant, Object)}); as stored when it is not a task
	 * envelope. Payloads can hold personal data: show them only to those allowed to see
	 * them.
	 * @param queue the queue
	 * @param id the task
	 * @return the payload, or empty when the task is not a dead letter or has none
	 * @since 0.3.0
	 */
	Optional<String> payload(String queue, TaskId id);

	/**
	 * Delete one dead letter.
	 * @param queue the queue
	 * @param id the task
	 * @return {@code true} if it was a dead letter and is gone
	 * @since 0.3.0
	 */
	boolean delete(String queue, TaskId id);

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

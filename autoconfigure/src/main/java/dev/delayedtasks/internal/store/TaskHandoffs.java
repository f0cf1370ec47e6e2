package dev.delayedtasks.internal.store;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * The dispatchers of this process that take tasks from the calls creating them, by queue:
 * the worker registers each running dispatcher, the producer asks here before an
 * {@code enqueue} call.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class TaskHandoffs {

	private final Map<String, TaskHandoff> byQueue = new ConcurrentHashMap<>();

	/**
	 * Offer the tasks of a queue to a dispatcher, in place of the one registered before.
	 * @param queue the queue
	 * @param handoff the dispatcher's side
	 */
	public void register(String queue, TaskHandoff handoff) {
		this.byQueue.put(queue, handoff);
	}

	/**
	 * Stop offering the tasks of a queue to a dispatcher, if it is still the registered
	 * one.
	 * @param queue the queue
	 * @param handoff the dispatcher's side
	 */
	public void unregister(String queue, TaskHandoff handoff) {
		this.byQueue.remove(queue, handoff);
	}

	/**
	 * Set aside room for up to {@code max} tasks of a queue.
	 * @param queue the queue
	 * @param max the most tasks the call may lease, at least 1
	 * @return the reservation, or {@code null} when no dispatcher of the queue runs here
	 * or none has room
	 */
	public TaskHandoff.@Nullable Reservation reserve(String queue, int max) {
		TaskHandoff handoff = this.byQueue.get(queue);
		return (handoff != null) ? handoff.reserve(max) : null;
	}

}

package dev.delayedtasks.observation;

import dev.delayedtasks.TaskOutcome;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * The observation context of tracking a task: from {@code track} until the producer
 * learns how the task ended. The scheduling observation and, through the task's headers,
 * the handler's run are its children in a trace.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class TrackObservationContext extends Observation.Context {

	private final String queue;

	private volatile @Nullable String taskId;

	private volatile TaskOutcome.@Nullable Kind outcome;

	/**
	 * Create a context.
	 * @param queue the task's queue
	 */
	public TrackObservationContext(String queue) {
		this.queue = queue;
	}

	/**
	 * The queue.
	 * @return the queue
	 */
	public String getQueue() {
		return this.queue;
	}

	/**
	 * The tracked task's id, once it is known.
	 * @return the id, or {@code null} while the task is being scheduled
	 */
	public @Nullable String getTaskId() {
		return this.taskId;
	}

	/**
	 * Set the tracked task's id.
	 * @param taskId the id
	 */
	public void setTaskId(String taskId) {
		this.taskId = taskId;
	}

	/**
	 * How the task ended.
	 * @return the kind, or {@code null} when the tracking ended without an outcome
	 * (scheduling failed, the wait ran out, the application stopped)
	 */
	public TaskOutcome.@Nullable Kind getOutcome() {
		return this.outcome;
	}

	/**
	 * Set how the task ended.
	 * @param outcome the kind
	 */
	public void setOutcome(TaskOutcome.@Nullable Kind outcome) {
		this.outcome = outcome;
	}

}

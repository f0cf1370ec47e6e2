package dev.delayedtasks;

import org.jspecify.annotations.Nullable;

/**
 * Thrown when Redis could not be reached or refused an operation. When it is thrown by a
 * scheduling call, the task may or may not have been stored: retrying with the same
 * {@link #getTaskId() id} is safe, because scheduling with an id that exists returns that
 * task instead of creating another.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public class TaskStoreException extends DelayedTaskException {

	/** The id of the task the failed call was about, if it was about one. */
	private final @Nullable TaskId taskId;

	/**
	 * Create an exception.
	 * @param message what failed
	 * @param taskId the id of the task being written, if any
	 * @param cause the cause, if any
	 */
	public TaskStoreException(String message, @Nullable TaskId taskId, @Nullable Throwable cause) {
		super(message, cause);
		this.taskId = taskId;
	}

	/**
	 * The id of the task that was being written, to retry with.
	 * @return the id, or {@code null} for operations that write no single task
	 */
	public @Nullable TaskId getTaskId() {
		return this.taskId;
	}

}

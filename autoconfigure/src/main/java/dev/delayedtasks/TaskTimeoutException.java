package dev.delayedtasks;

import java.time.Duration;

/**
 * Recorded as the failure of a run that exceeded its handler's timeout and was
 * interrupted.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public class TaskTimeoutException extends DelayedTaskException {

	/**
	 * Create an exception.
	 * @param timeout the handler's timeout
	 */
	public TaskTimeoutException(Duration timeout) {
		super("Handler exceeded its timeout of " + timeout + " and was interrupted");
	}

}

package dev.delayedtasks.benchmarks;

import dev.delayedtasks.TaskId;

/**
 * Hears of every task a producer scheduled.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@FunctionalInterface
interface EnqueueSink {

	/** A sink that forgets everything, for tasks that are not expected to run. */
	EnqueueSink NONE = (id, micros) -> {
	};

	/**
	 * A task was scheduled.
	 * @param id its id
	 * @param localMicros when the call returned, local clock, epoch microseconds
	 */
	void enqueued(TaskId id, long localMicros);

}

package dev.delayedtasks.internal.worker;

import dev.delayedtasks.TaskContext;
import org.jspecify.annotations.Nullable;

/**
 * Decides, just before a handler runs a task, whether the task runs: the hook recurring
 * schedules use to apply their misfire and overlap policies to an occurrence (a task that
 * carries the {@value #HEADER} header) and to advance the schedule. A task that is not
 * admitted completes as succeeded without calling the handler.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public interface OccurrenceGate {

	/** The header that marks an occurrence of a recurring schedule: the schedule id. */
	String HEADER = "dt-recurring";

	/** A gate that admits every task. */
	OccurrenceGate OPEN = new OccurrenceGate() {

		@Override
		public boolean admit(TaskContext context) {
			return true;
		}

		@Override
		public void finished(TaskContext context, @Nullable Throwable failure) {
		}

	};

	/**
	 * Whether the handler runs this task, asked on its worker thread before the handler.
	 * @param context the task
	 * @return {@code true} to run it, {@code false} to complete it without running
	 */
	boolean admit(TaskContext context);

	/**
	 * The handler ran an admitted task.
	 * @param context the task
	 * @param failure what it threw, or {@code null}
	 */
	void finished(TaskContext context, @Nullable Throwable failure);

}

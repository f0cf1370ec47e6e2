package dev.delayedtasks.observation;

import java.util.HashMap;
import java.util.Map;

import dev.delayedtasks.TaskContext;
import io.micrometer.observation.transport.ReceiverContext;
import org.jspecify.annotations.Nullable;

/**
 * The observation context of one handler run. A receiver context over the task's headers,
 * so a tracing handler continues the trace whose context the producer put there.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class TaskRunObservationContext extends ReceiverContext<Map<String, String>> {

	private final TaskContext task;

	private final String handlerId;

	private @Nullable String outcome;

	/**
	 * Create a context.
	 * @param task the run
	 * @param handlerId the handler's id
	 */
	public TaskRunObservationContext(TaskContext task, String handlerId) {
		super((carrier, key) -> carrier.get(key));
		setCarrier(new HashMap<>(task.headers()));
		setRemoteServiceName("redis");
		this.task = task;
		this.handlerId = handlerId;
	}

	/**
	 * The run.
	 * @return the task context
	 */
	public TaskContext getTask() {
		return this.task;
	}

	/**
	 * The handler's id.
	 * @return the id
	 */
	public String getHandlerId() {
		return this.handlerId;
	}

	/**
	 * How the run ended: {@code success}, {@code failure} or {@code timeout}.
	 * @return the outcome, or {@code null} while it runs
	 */
	public @Nullable String getOutcome() {
		return this.outcome;
	}

	/**
	 * Record how the run ended.
	 * @param outcome {@code success}, {@code failure} or {@code timeout}
	 */
	public void setOutcome(String outcome) {
		this.outcome = outcome;
	}

}

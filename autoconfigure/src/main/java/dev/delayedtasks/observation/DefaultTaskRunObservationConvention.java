package dev.delayedtasks.observation;

import dev.delayedtasks.observation.DelayedTaskObservation.RunHighCardinalityKeys;
import dev.delayedtasks.observation.DelayedTaskObservation.RunLowCardinalityKeys;
import io.micrometer.common.KeyValues;

/**
 * The default {@link TaskRunObservationConvention}: observation {@code delayed.tasks.run}
 * tagged with queue, handler and outcome; the task id and attempt as high-cardinality
 * values; contextual name {@code <queue> run}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public class DefaultTaskRunObservationConvention implements TaskRunObservationConvention {

	@Override
	public String getName() {
		return "delayed.tasks.run";
	}

	@Override
	public String getContextualName(TaskRunObservationContext context) {
		return context.getTask().queue() + " run";
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(TaskRunObservationContext context) {
		String outcome = (context.getOutcome() != null) ? context.getOutcome() : "running";
		return KeyValues.of(RunLowCardinalityKeys.QUEUE.withValue(context.getTask().queue()),
				RunLowCardinalityKeys.HANDLER.withValue(context.getHandlerId()),
				RunLowCardinalityKeys.OUTCOME.withValue(outcome));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(TaskRunObservationContext context) {
		return KeyValues.of(RunHighCardinalityKeys.TASK_ID.withValue(context.getTask().id().value()),
				RunHighCardinalityKeys.ATTEMPT.withValue(Integer.toString(context.getTask().attempt())));
	}

}

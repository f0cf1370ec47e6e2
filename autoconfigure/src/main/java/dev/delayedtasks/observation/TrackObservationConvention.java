package dev.delayedtasks.observation;

import java.util.Locale;

import dev.delayedtasks.TaskOutcome;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The names and key values of tracking observations. Register a
 * {@code GlobalObservationConvention} of {@link TrackObservationContext} to change them.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface TrackObservationConvention extends ObservationConvention<TrackObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof TrackObservationContext;
	}

	@Override
	default String getName() {
		return "delayed.tasks.track";
	}

	@Override
	default String getContextualName(TrackObservationContext context) {
		return context.getQueue() + " track";
	}

	@Override
	default KeyValues getLowCardinalityKeyValues(TrackObservationContext context) {
		TaskOutcome.Kind outcome = context.getOutcome();
		return KeyValues.of(DelayedTaskObservation.TrackLowCardinalityKeys.QUEUE.withValue(context.getQueue()),
				DelayedTaskObservation.TrackLowCardinalityKeys.OUTCOME
					.withValue((outcome != null) ? outcome.name().toLowerCase(Locale.ROOT) : "none"));
	}

	@Override
	default KeyValues getHighCardinalityKeyValues(TrackObservationContext context) {
		String id = context.getTaskId();
		return (id != null) ? KeyValues.of(DelayedTaskObservation.TrackHighCardinalityKeys.TASK_ID.withValue(id))
				: KeyValues.empty();
	}

}

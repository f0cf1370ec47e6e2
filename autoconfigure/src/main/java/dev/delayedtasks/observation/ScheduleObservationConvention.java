package dev.delayedtasks.observation;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The names and key values of scheduling observations. Declare a bean to change them.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface ScheduleObservationConvention extends ObservationConvention<ScheduleObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof ScheduleObservationContext;
	}

	@Override
	default String getName() {
		return "delayed.tasks.schedule";
	}

	@Override
	default String getContextualName(ScheduleObservationContext context) {
		return context.getQueue() + " schedule";
	}

	@Override
	default KeyValues getLowCardinalityKeyValues(ScheduleObservationContext context) {
		return KeyValues.of(DelayedTaskObservation.ScheduleLowCardinalityKeys.QUEUE.withValue(context.getQueue()));
	}

}

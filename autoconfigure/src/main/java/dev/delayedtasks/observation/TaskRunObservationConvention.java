package dev.delayedtasks.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The names and key values of handler-run observations. Declare a bean to change them.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface TaskRunObservationConvention extends ObservationConvention<TaskRunObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof TaskRunObservationContext;
	}

}

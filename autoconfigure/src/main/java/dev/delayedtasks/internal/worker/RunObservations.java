package dev.delayedtasks.internal.worker;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.observation.DefaultTaskRunObservationConvention;
import dev.delayedtasks.observation.DelayedTaskObservation;
import dev.delayedtasks.observation.TaskRunObservationContext;
import dev.delayedtasks.observation.TaskRunObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Opens an {@link DelayedTaskObservation#RUN} observation around each handler run, in
 * scope on the handler's thread, so the handler's own observations and logs join the
 * trace the producer started.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RunObservations {

	private static final DefaultTaskRunObservationConvention DEFAULT_CONVENTION = new DefaultTaskRunObservationConvention();

	private final ObservationRegistry registry;

	private final @Nullable TaskRunObservationConvention convention;

	/**
	 * Create the observations.
	 * @param registry the registry ({@link ObservationRegistry#NOOP} for none)
	 * @param convention a custom convention, or {@code null} for the default
	 */
	public RunObservations(ObservationRegistry registry, @Nullable TaskRunObservationConvention convention) {
		this.registry = registry;
		this.convention = convention;
	}

	Run start(TaskContext task, String handlerId) {
		TaskRunObservationContext context = new TaskRunObservationContext(task, handlerId);
		Observation observation = DelayedTaskObservation.RUN.observation(this.convention, DEFAULT_CONVENTION,
				() -> context, this.registry);
		observation.start();
		return new Run(observation, context, observation.openScope());
	}

	/**
	 * One observed run.
	 */
	static final class Run {

		private final Observation observation;

		private final TaskRunObservationContext context;

		private final Observation.Scope scope;

		Run(Observation observation, TaskRunObservationContext context, Observation.Scope scope) {
			this.observation = observation;
			this.context = context;
			this.scope = scope;
		}

		void stop(@Nullable Throwable failure, boolean timedOut) {
			this.context.setOutcome(timedOut ? "timeout" : (failure != null) ? "failure" : "success");
			if (failure != null) {
				this.observation.error(failure);
			}
			this.scope.close();
			this.observation.stop();
		}

	}

}

package dev.delayedtasks.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observations delayed tasks makes.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public enum DelayedTaskObservation implements ObservationDocumentation {

	/**
	 * One handler run, from the handler's first line to its return. Its timer is the
	 * run-time metric ({@code delayed.tasks.run}, tags queue, handler, outcome); its span
	 * continues the producer's trace.
	 */
	RUN {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultTaskRunObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return RunLowCardinalityKeys.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return RunHighCardinalityKeys.values();
		}

	},

	/**
	 * Scheduling tasks: one call of {@code submit} or {@code scheduleAll}. Its trace
	 * context is sent in the tasks' headers.
	 */
	SCHEDULE {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultScheduleObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return ScheduleLowCardinalityKeys.values();
		}

	},

	/**
	 * Tracking a task ({@code DelayedTaskScheduler.track}): from the call until the
	 * producer learns how the task ended. Its timer ({@code delayed.tasks.track}, tags
	 * queue and outcome) is how long producers wait; its span is the parent of the
	 * scheduling span and so an ancestor of the handler's run, wherever it runs.
	 */
	TRACK {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultTrackObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return TrackLowCardinalityKeys.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return TrackHighCardinalityKeys.values();
		}

	};

	/**
	 * Low-cardinality keys of {@link #RUN}.
	 */
	public enum RunLowCardinalityKeys implements KeyName {

		/** The queue. */
		QUEUE {
			@Override
			public String asString() {
				return "queue";
			}
		},

		/** The handler's id. */
		HANDLER {
			@Override
			public String asString() {
				return "handler";
			}
		},

		/** {@code success}, {@code failure} or {@code timeout}. */
		OUTCOME {
			@Override
			public String asString() {
				return "outcome";
			}
		}

	}

	/**
	 * High-cardinality keys of {@link #RUN}.
	 */
	public enum RunHighCardinalityKeys implements KeyName {

		/** The task's id. */
		TASK_ID {
			@Override
			public String asString() {
				return "task.id";
			}
		},

		/** The attempt number. */
		ATTEMPT {
			@Override
			public String asString() {
				return "attempt";
			}
		}

	}

	/**
	 * Low-cardinality keys of {@link #SCHEDULE}.
	 */
	public enum ScheduleLowCardinalityKeys implements KeyName {

		/** The queue. */
		QUEUE {
			@Override
			public String asString() {
				return "queue";
			}
		}

	}

	/**
	 * Low-cardinality keys of {@link #TRACK}.
	 */
	public enum TrackLowCardinalityKeys implements KeyName {

		/** The queue. */
		QUEUE {
			@Override
			public String asString() {
				return "queue";
			}
		},

		/**
		 * {@code succeeded}, {@code dead_lettered}, {@code cancelled}, {@code expired},
		 * or {@code none} when the tracking ended without an outcome.
		 */
		OUTCOME {
			@Override
			public String asString() {
				return "outcome";
			}
		}

	}

	/**
	 * High-cardinality keys of {@link #TRACK}.
	 */
	public enum TrackHighCardinalityKeys implements KeyName {

		/** The task's id. */
		TASK_ID {
			@Override
			public String asString() {
				return "task.id";
			}
		}

	}

	/**
	 * The default convention of {@link #TRACK}.
	 */
	public static final class DefaultTrackObservationConvention implements TrackObservationConvention {

	}

	/**
	 * The default convention of {@link #SCHEDULE}.
	 */
	public static final class DefaultScheduleObservationConvention implements ScheduleObservationConvention {

	}

}

package dev.delayedtasks.internal.producer;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.observation.DelayedTaskObservation;
import dev.delayedtasks.observation.DelayedTaskObservation.DefaultScheduleObservationConvention;
import dev.delayedtasks.observation.DelayedTaskObservation.DefaultTrackObservationConvention;
import dev.delayedtasks.observation.ScheduleObservationContext;
import dev.delayedtasks.observation.ScheduleObservationConvention;
import dev.delayedtasks.observation.TrackObservationContext;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The {@link DelayedTaskObservation#SCHEDULE} observations of a scheduler, around
 * blocking and non-blocking calls alike; nothing at all when the registry is a no-op (no
 * context, no observation, no trace headers).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class ScheduleObservations {

	private static final DefaultScheduleObservationConvention DEFAULT_CONVENTION = new DefaultScheduleObservationConvention();

	private static final DefaultTrackObservationConvention DEFAULT_TRACK_CONVENTION = new DefaultTrackObservationConvention();

	private final ObservationRegistry registry;

	private final @Nullable ScheduleObservationConvention convention;

	ScheduleObservations(ObservationRegistry registry, @Nullable ScheduleObservationConvention convention) {
		this.registry = registry;
		this.convention = convention;
	}

	/**
	 * Run {@code work} in a {@link DelayedTaskObservation#SCHEDULE} observation and hand
	 * it the trace headers the observation's tracing handler wrote, so they travel with
	 * the tasks.
	 * @param <T> the type of the result
	 * @param queue the queue
	 * @param tasks how many tasks are scheduled
	 * @param work the scheduling, given the trace headers
	 * @return what {@code work} returns
	 */
	<T> T observe(String queue, int tasks, Function<Map<String, String>, T> work) {
		if (this.registry.isNoop()) {
			// No registry: no context, no observation, no trace headers to add.
			return work.apply(Map.of());
		}
		ScheduleObservationContext context = new ScheduleObservationContext(queue, tasks);
		Observation observation = DelayedTaskObservation.SCHEDULE.observation(this.convention, DEFAULT_CONVENTION,
				() -> context, this.registry);
		return observation.observe(() -> work.apply(context.propagatedHeaders()));
	}

	/**
	 * Run {@code work}, which schedules a tracked task, in a
	 * {@link DelayedTaskObservation#TRACK} observation that stops when the task's outcome
	 * is known: the scheduling observation inside it, and so the handler's run, are its
	 * descendants.
	 * @param queue the queue
	 * @param work schedules the task and returns its handle
	 * @return what {@code work} returns
	 */
	TrackedTask observeTracking(String queue, Supplier<TrackedTask> work) {
		if (this.registry.isNoop()) {
			return work.get();
		}
		TrackObservationContext context = new TrackObservationContext(queue);
		Observation observation = DelayedTaskObservation.TRACK.observation(null, DEFAULT_TRACK_CONVENTION,
				() -> context, this.registry);
		observation.start();
		TrackedTask tracked;
		try (Observation.Scope scope = observation.openScope()) {
			tracked = work.get();
		}
		catch (RuntimeException ex) {
			observation.error(ex);
			observation.stop();
			throw ex;
		}
		context.setTaskId(tracked.id().value());
		tracked.outcome().whenComplete((outcome, ex) -> {
			if (outcome != null) {
				context.setOutcome(outcome.kind());
			}
			if (ex != null) {
				observation.error(ex);
			}
			observation.stop();
		});
		return tracked;
	}

	static TaskRequest withTrace(TaskRequest request, Map<String, String> trace) {
		TaskRequest traced = request;
		for (Map.Entry<String, String> header : trace.entrySet()) {
			if (!request.headers().containsKey(header.getKey())) {
				traced = traced.header(header.getKey(), header.getValue());
			}
		}
		return traced;
	}

	static <T> CompletableFuture<T> failIfInvalid(Supplier<CompletableFuture<T>> call) {
		try {
			return call.get();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * The asynchronous form of {@link #observe}: the observation stops when the future
	 * completes; a failure to start the work (invalid input) fails the future.
	 * @param <T> the type of the result
	 * @param queue the queue
	 * @param tasks how many tasks are scheduled
	 * @param work starts the scheduling, given the trace headers
	 * @return what {@code work} returns, or a failed future
	 */
	<T> CompletableFuture<T> observeAsync(String queue, int tasks,
			Function<Map<String, String>, CompletableFuture<T>> work) {
		if (this.registry.isNoop()) {
			return failIfInvalid(() -> work.apply(Map.of()));
		}
		ScheduleObservationContext context = new ScheduleObservationContext(queue, tasks);
		Observation observation = DelayedTaskObservation.SCHEDULE.observation(this.convention, DEFAULT_CONVENTION,
				() -> context, this.registry);
		observation.start();
		CompletableFuture<T> future;
		try (Observation.Scope scope = observation.openScope()) {
			future = work.apply(context.propagatedHeaders());
		}
		catch (RuntimeException ex) {
			observation.error(ex);
			observation.stop();
			return CompletableFuture.failedFuture(ex);
		}
		return future.whenComplete((result, ex) -> {
			if (ex != null) {
				observation.error((ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex);
			}
			observation.stop();
		});
	}

}

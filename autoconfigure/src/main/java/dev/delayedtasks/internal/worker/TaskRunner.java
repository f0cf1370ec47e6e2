package dev.delayedtasks.internal.worker;

import java.lang.reflect.Type;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.RateLimitedException;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskTimeoutException;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.codec.PayloadCodec.Envelope;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.slf4j.MDC;
import tools.jackson.databind.JavaType;

import org.springframework.scheduling.TaskScheduler;
import org.springframework.util.ClassUtils;

/**
 * Runs one claimed task on a worker thread: converts the payload to the handler's
 * declared type, calls the handler under its timeout with the task in the MDC, and hands
 * the outcome to the completion path. A payload that cannot be converted is dead-lettered
 * on its first delivery instead of being retried for ever.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class TaskRunner {

	private static final Log logger = LogFactory.getLog(TaskRunner.class);

	private static final Duration FALLBACK_BACK_OFF = Duration.ofSeconds(1);

	private static final boolean MDC_PRESENT = ClassUtils.isPresent("org.slf4j.MDC", TaskRunner.class.getClassLoader());

	private final HandlerEndpoint endpoint;

	private final ContainerSettings container;

	private final PayloadCodec codec;

	private final @Nullable JavaType payloadType;

	private final FailureRouter failures;

	private final Completions completions;

	private final Listeners listeners;

	private final TaskScheduler scheduler;

	private final RunObservations observations;

	private final OccurrenceGate gate;

	TaskRunner(HandlerEndpoint endpoint, ContainerSettings container, PayloadCodec codec, FailureRouter failures,
			Completions completions, Listeners listeners, TaskScheduler scheduler, RunObservations observations,
			OccurrenceGate gate) {
		this.endpoint = endpoint;
		this.container = container;
		this.codec = codec;
		Type declared = endpoint.method().payloadType();
		this.payloadType = (declared != null) ? codec.type(declared) : null;
		if (this.payloadType != null) {
			// Warm start: the first task's payload is read as fast as later ones.
			codec.prepare(this.payloadType);
		}
		this.failures = failures;
		this.completions = completions;
		this.listeners = listeners;
		this.scheduler = scheduler;
		this.observations = observations;
		this.gate = gate;
	}

	/**
	 * Read a stored envelope, or {@code null} when it is unreadable (the run then
	 * dead-letters the task).
	 * @param envelope the stored JSON
	 * @return the envelope
	 */
	@Nullable Envelope read(String envelope) {
		try {
			return this.codec.read(envelope);
		}
		catch (RuntimeException | StackOverflowError | LinkageError ex) {
			// Called on the dispatcher thread: whatever the data does to the reader, the
			// task is dead-lettered as unreadable instead of stopping the dispatcher.
			return null;
		}
	}

	/**
	 * Run a claimed task on the calling worker thread. Every run ends in exactly one of
	 * three ways: an outcome handed to the completion path (any {@link Throwable} counts
	 * as a failure), a return for release when shutdown interrupted it, or nothing at all
	 * when shutdown took it back before it started.
	 * @param run the run
	 * @param envelope the read envelope, or {@code null} when it was unreadable
	 * @param rawEnvelope the stored JSON
	 */
	void run(ActiveRun run, @Nullable Envelope envelope, String rawEnvelope) {
		if (!run.start(Thread.currentThread())) {
			return;
		}
		long started = System.nanoTime();
		Throwable failure;
		TaskFailure decision = null;
		Result result = new Result();
		try {
			Object payload = convert(envelope, rawEnvelope);
			if (!admitted(run)) {
				// A recurring occurrence its schedule's policies skip: done, unrun.
				failure = null;
			}
			else {
				failure = invoke(run, payload, result);
				finishedOccurrence(run, failure);
			}
		}
		catch (IllegalArgumentException ex) {
			failure = ex;
			decision = TaskFailure.of(null, FailureReason.UNREADABLE_PAYLOAD, ex);
		}
		catch (Throwable ex) {
			// An Error from a payload class's static initializer, a deserializer that
			// overflows the stack, a timeout that cannot be scheduled: still a failed
			// run.
			failure = ex;
		}
		finally {
			run.unbind();
			// The interrupt was for the handler; the thread goes back to the pool clean.
			Thread.interrupted();
		}
		if (failure != null && ActiveRun.SHUTDOWN.equals(run.stopReason())) {
			// Interrupted by a graceful stop: no penalty, the task goes back to the
			// queue.
			run.returnForRelease();
			return;
		}
		if (failure != null && ActiveRun.LEASE_LOST.equals(run.stopReason())) {
			// Interrupted because its lease ran out (Redis stalled, or this process did):
			// not the handler's failure, so no attempt is spent. The task comes back
			// when its lease expires, counted as an expired lease (max-deliveries).
			if (run.finish()) {
				this.completions.leaseLost(run);
			}
			return;
		}
		if (!run.finish()) {
			return;
		}
		Duration runTime = Duration.ofNanos(System.nanoTime() - started);
		if (failure == null) {
			this.completions.succeeded(run, runTime, result.json);
			return;
		}
		RateLimitedException rateLimited = rateLimited(failure);
		if (rateLimited != null && decision == null) {
			this.completions.rateLimited(run, rateLimited);
			return;
		}
		this.completions.failed(run, failure, (decision != null) ? decision : route(failure, run.context()), runTime);
		if (failure instanceof VirtualMachineError error && !(failure instanceof StackOverflowError)) {
			// Recorded; now let the JVM see it.
			throw error;
		}
	}

	/**
	 * Call the handler under its timeout, in its observation, with the task in the MDC.
	 * Whatever happens around the handler (a failing observation or listener included)
	 * becomes the run's failure, so every run ends with exactly one recorded outcome.
	 * @param run the run
	 * @param payload the payload, converted to the handler's type
	 * @param result receives the handler's return value as JSON
	 * @return the run's failure, or {@code null} when the handler returned
	 */
	private @Nullable Throwable invoke(ActiveRun run, @Nullable Object payload, Result result) {
		TaskContext context = run.context();
		Throwable failure = null;
		RunObservations.Run observed = null;
		ScheduledFuture<?> timeout = scheduleTimeout(run);
		putMdc(context);
		try {
			observed = this.observations.start(context, this.endpoint.id());
			this.listeners.started(context);
			Object value = this.endpoint.method().invoke(payload, context);
			if (value != null) {
				// Written here, so a result that cannot be kept fails the run.
				result.json = this.codec.result(context.queue(), value);
			}
		}
		catch (Throwable ex) {
			failure = ex;
		}
		finally {
			if (timeout != null) {
				timeout.cancel(false);
			}
			if (observed != null) {
				try {
					observed.stop(failure, run.timedOut());
				}
				catch (RuntimeException ex) {
					logger.warn("Observation of task " + context.id() + " failed: " + ex);
				}
			}
			clearMdc();
		}
		if (run.timedOut() && this.container.timeout() != null) {
			return new TaskTimeoutException(this.container.timeout());
		}
		return failure;
	}

	/**
	 * Whether a recurring occurrence runs. Only its first attempt asks: a retry was
	 * admitted before.
	 * @param run the run
	 * @return whether to call the handler
	 */
	private boolean admitted(ActiveRun run) {
		TaskContext context = run.context();
		// Every delivery of the first attempt asks: the gate admits again an occurrence
		// admitted by an earlier delivery (a crash, a reap, a graceful stop), and decides
		// for one whose earlier delivery died before asking.
		if (context.header(OccurrenceGate.HEADER) == null || context.attempt() > 1) {
			return true;
		}
		try {
			return this.gate.admit(context);
		}
		catch (RuntimeException ex) {
			// At least once: an occurrence whose policies cannot be read runs.
			logger.warn("Could not apply the policies of recurring occurrence " + context.id() + " (" + ex
					+ "); running it");
			return true;
		}
	}

	private void finishedOccurrence(ActiveRun run, @Nullable Throwable failure) {
		TaskContext context = run.context();
		if (context.header(OccurrenceGate.HEADER) == null) {
			return;
		}
		try {
			this.gate.finished(context, failure);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not record the outcome of recurring occurrence " + context.id() + ": " + ex);
		}
	}

	/**
	 * The "slow down" a handler threw, itself or as the cause of what it threw.
	 * @param failure what the handler threw
	 * @return the exception, or {@code null} when it is another failure
	 */
	private static @Nullable RateLimitedException rateLimited(Throwable failure) {
		try {
			Throwable current = failure;
			// Bounded: a cause chain can loop.
			for (int depth = 0; current != null && depth < 16; depth++) {
				if (current instanceof RateLimitedException rateLimited) {
					return rateLimited;
				}
				current = current.getCause();
			}
		}
		catch (RuntimeException | LinkageError | StackOverflowError ex) {
			// A user exception's getCause() that throws: the run is an ordinary failure.
			return null;
		}
		return null;
	}

	private TaskFailure route(Throwable failure, TaskContext context) {
		try {
			return this.failures.route(failure, context.attempt() - 1, this.container.retryPolicy());
		}
		catch (RuntimeException ex) {
			logger.warn("Retry policy of handler " + this.endpoint.id() + " failed (" + ex + "); retrying task "
					+ context.id() + " after " + FALLBACK_BACK_OFF);
			return TaskFailure.of(FALLBACK_BACK_OFF, FailureReason.RETRIES_EXHAUSTED, failure);
		}
	}

	private @Nullable Object convert(@Nullable Envelope envelope, String rawEnvelope) {
		if (envelope == null) {
			throw new IllegalArgumentException("The stored payload is not a readable task envelope: "
					+ this.codec.describeUnreadable(rawEnvelope));
		}
		return (this.payloadType != null) ? this.codec.convert(envelope.body(), this.payloadType) : null;
	}

	private @Nullable ScheduledFuture<?> scheduleTimeout(ActiveRun run) {
		Duration limit = this.container.timeout();
		if (limit == null) {
			return null;
		}
		return this.scheduler.schedule(run::timeOut, Instant.now().plus(limit));
	}

	private static void putMdc(TaskContext context) {
		if (MDC_PRESENT) {
			MDC.put("taskId", context.id().value());
			MDC.put("queue", context.queue());
			MDC.put("attempt", Integer.toString(context.attempt()));
		}
	}

	private static void clearMdc() {
		if (MDC_PRESENT) {
			for (String key : new String[] { "taskId", "queue", "attempt" }) {
				MDC.remove(key);
			}
		}
	}

	static Map<String, String> headers(@Nullable Envelope envelope) {
		return (envelope != null) ? envelope.headers() : Map.of();
	}

	/** A run's result, as JSON, or {@code null} for none. */
	private static final class Result {

		private @Nullable String json;

	}

}

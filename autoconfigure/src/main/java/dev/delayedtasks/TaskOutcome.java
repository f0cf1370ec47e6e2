package dev.delayedtasks;

import java.time.Instant;
import java.util.Optional;
import java.util.function.BiFunction;

import org.jspecify.annotations.Nullable;

/**
 * How a task ended, as Redis recorded it in the same script that ended it: kept for
 * {@code delayed-tasks.results.retention} (per queue overridable) after the end, and for
 * at least {@code delayed-tasks.results.tracked-retention} when a producer tracks the
 * task ({@link DelayedTaskScheduler#track(TaskRequest)}).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class TaskOutcome {

	private final TaskId id;

	private final String queue;

	private final Kind kind;

	private final int runs;

	private final Instant finishedAt;

	private final @Nullable String reason;

	private final @Nullable String exceptionType;

	private final @Nullable String message;

	private final @Nullable String resultJson;

	private final BiFunction<String, Class<?>, ?> resultReader;

	/**
	 * Create an outcome.
	 * @param id the task
	 * @param queue its queue
	 * @param kind how it ended
	 * @param runs how many times a handler ran it
	 * @param finishedAt when it ended, Redis time
	 * @param reason the dead-letter reason ({@link FailureReason#value()}), or
	 * {@code null}
	 * @param exceptionType the last failure's exception type, or {@code null}
	 * @param message the last failure's message, or {@code null}
	 * @param resultJson the handler's return value as JSON, or {@code null}
	 * @param resultReader reads the JSON as a type
	 */
	public TaskOutcome(TaskId id, String queue, Kind kind, int runs, Instant finishedAt, @Nullable String reason,
			@Nullable String exceptionType, @Nullable String message, @Nullable String resultJson,
			BiFunction<String, Class<?>, ?> resultReader) {
		this.id = id;
		this.queue = queue;
		this.kind = kind;
		this.runs = runs;
		this.finishedAt = finishedAt;
		this.reason = reason;
		this.exceptionType = exceptionType;
		this.message = message;
		this.resultJson = resultJson;
		this.resultReader = resultReader;
	}

	/**
	 * The task.
	 * @return its id
	 */
	public TaskId id() {
		return this.id;
	}

	/**
	 * The task's queue.
	 * @return the queue
	 */
	public String queue() {
		return this.queue;
	}

	/**
	 * How the task ended.
	 * @return the kind
	 */
	public Kind kind() {
		return this.kind;
	}

	/**
	 * Whether a handler completed the task.
	 * @return whether it succeeded
	 */
	public boolean succeeded() {
		return this.kind == Kind.SUCCEEDED;
	}

	/**
	 * How many times a handler ran the task, the last run included.
	 * @return the runs, 0 for a task cancelled or expired before it ran
	 */
	public int runs() {
		return this.runs;
	}

	/**
	 * When the task ended, Redis time.
	 * @return the instant
	 */
	public Instant finishedAt() {
		return this.finishedAt;
	}

	/**
	 * Why a dead-lettered or expired task ended: a {@link FailureReason#value()}.
	 * @return the reason, empty for a task that succeeded or was cancelled
	 */
	public Optional<String> reason() {
		return Optional.ofNullable(this.reason);
	}

	/**
	 * The exception type of the last failed run.
	 * @return the type, empty when no run failed last
	 */
	public Optional<String> exceptionType() {
		return Optional.ofNullable(this.exceptionType);
	}

	/**
	 * The message of the last failure (truncated, as in dead letters).
	 * @return the message, empty when there is none
	 */
	public Optional<String> message() {
		return Optional.ofNullable(this.message);
	}

	/**
	 * The handler's return value, as the JSON it was stored as.
	 * @return the JSON, empty when the task did not succeed or its handler returned
	 * nothing
	 */
	public Optional<String> resultJson() {
		return Optional.ofNullable(this.resultJson);
	}

	/**
	 * The handler's return value, read as {@code type} with the application's JSON
	 * mapper.
	 * @param <T> the type
	 * @param type the type
	 * @return the value, empty when there is none
	 * @throws IllegalArgumentException when the JSON cannot be read as {@code type}
	 */
	public <T> Optional<T> result(Class<T> type) {
		if (this.resultJson == null) {
			return Optional.empty();
		}
		return Optional.ofNullable(type.cast(this.resultReader.apply(this.resultJson, type)));
	}

	@Override
	public String toString() {
		return "TaskOutcome[" + this.queue + "/" + this.id + " " + this.kind + " after " + this.runs + " run(s) at "
				+ this.finishedAt + ((this.reason != null) ? ", reason " + this.reason : "") + "]";
	}

	/**
	 * How a task ended.
	 */
	public enum Kind {

		/** A handler completed it. */
		SUCCEEDED,

		/** It went to the dead letters: retries exhausted, not retryable, and so on. */
		DEAD_LETTERED,

		/** It was cancelled, before or while it ran. */
		CANCELLED,

		/** It had not started by its expiry and never ran again. */
		EXPIRED

	}

}

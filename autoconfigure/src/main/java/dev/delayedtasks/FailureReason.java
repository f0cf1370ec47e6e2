package dev.delayedtasks;

import java.util.Optional;

/**
 * Why a task failed or went to the dead letters: the one vocabulary of failure reasons.
 * The {@link #value() value} is what is stored in Redis and what users see, in
 * {@link DeadLetter#reason()}, {@link TaskInfo.TaskError#reason()},
 * {@link DelayedTaskListener#deadLettered}, the {@code reason} tag of the
 * {@code delayed.tasks.dead.lettered} metric, the Actuator endpoint and the failure log.
 * The store's Lua scripts write the reasons they decide themselves from one include,
 * {@code store/includes/reasons.lua}, which a test keeps equal to this enum.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public enum FailureReason {

	/**
	 * A run failed and the task will run again: the reason of a retrying task's last
	 * error, never of a dead letter. Written by the store.
	 */
	FAILED("failed"),

	/**
	 * The task failed as many times as its max attempts allow. Decided by the store,
	 * which holds the task's max attempts.
	 */
	RETRIES_EXHAUSTED("retries-exhausted"),

	/**
	 * The handler threw {@link NonRetryableTaskException}, or an exception that the retry
	 * policy does not retry ({@code delayed-tasks.retry.exception-excludes} and
	 * {@code exception-includes}). Decided by the worker.
	 */
	NON_RETRYABLE("non-retryable"),

	/**
	 * The stored payload could not be converted to the handler's parameter type; such a
	 * task is dead-lettered on its first delivery. Decided by the worker.
	 */
	UNREADABLE_PAYLOAD("unreadable-payload"),

	/**
	 * The task's lease expired {@code delayed-tasks.worker.max-deliveries} times in a row
	 * without a recorded failure: a task that keeps killing its worker. Decided by the
	 * store.
	 */
	MAX_DELIVERIES("max-deliveries"),

	/**
	 * The task's data in Redis could not be read (a missing field, a key of the wrong
	 * type); the store moved it to the dead letters instead of failing. Decided by the
	 * store.
	 */
	CORRUPT("corrupt"),

	/**
	 * The task had not started by its expiry
	 * ({@link TaskRequest#expiresAt(java.time.Instant)},
	 * {@link TaskRequest#expireAfter(java.time.Duration)}), so it was never run; kept as
	 * a dead letter when {@code delayed-tasks.expiry.dead-letter} is true. Decided by the
	 * store.
	 */
	EXPIRED("expired"),

	/**
	 * A dead letter without an error record, for example one deleted by hand. Never
	 * stored: it is what a dead letter without a reason reads as.
	 */
	UNKNOWN("unknown");

	private final String value;

	FailureReason(String value) {
		this.value = value;
	}

	/**
	 * The reason as it is stored and shown, for example {@code retries-exhausted}.
	 * @return the value
	 */
	public String value() {
		return this.value;
	}

	/**
	 * Whether a dead letter can have this reason: all but {@link #FAILED}.
	 * @return whether it is a dead-letter reason
	 */
	public boolean isDeadLetterReason() {
		return this != FAILED;
	}

	/**
	 * The reason with the given value.
	 * @param value a stored or shown value, for example {@code non-retryable}
	 * @return the reason, or empty when the value is none of this version's (a newer
	 * version may have written it)
	 */
	public static Optional<FailureReason> fromValue(String value) {
		for (FailureReason reason : values()) {
			if (reason.value.equals(value)) {
				return Optional.of(reason);
			}
		}
		return Optional.empty();
	}

}

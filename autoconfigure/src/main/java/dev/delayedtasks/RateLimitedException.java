package dev.delayedtasks;

import java.time.Duration;

/**
 * Thrown by a handler when the system behind it says "slow down" (an HTTP 429 with its
 * {@code Retry-After}, a quota used up): the task goes back to the head of its queue
 * without spending an attempt or a delivery, and the whole queue is held, on every
 * instance, for {@link #retryAfter()} in Redis time (a longer hold in force stays). The
 * task runs again, first of its queue, once the hold ends. With {@link Scope#KEY} only
 * the task's rate key is held ({@link TaskRequest#rateKey(String)}, on a queue with a
 * {@code key-rate-limit}): its tasks wait for the hold's end, this one first, while the
 * queue's other tasks run on. Counted per queue by the {@code delayed.tasks.rate.limited}
 * meter and told to {@link DelayedTaskListener#rateLimited listeners}; see
 * docs/flow-control.md.
 * <p>
 * Recognised when the handler throws it or an exception caused by it. A task that the
 * downstream refuses for ever keeps coming back without ever dead-lettering: bound it in
 * the handler (for example by {@link TaskContext#deliveryCount()} or the task's age) and
 * throw another exception then.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public class RateLimitedException extends DelayedTaskException {

	/** The longest hold a handler may ask for. */
	public static final Duration LONGEST_RETRY_AFTER = Duration.ofDays(1);

	/** How long the queue is held, checked when the exception was created. */
	private final Duration retryAfter;

	/** What is held. */
	private final Scope scope;

	/**
	 * Create an exception.
	 * @param retryAfter how long to hold the queue: more than zero, at most
	 * {@link #LONGEST_RETRY_AFTER}; rounded up to whole milliseconds
	 * @throws IllegalArgumentException when {@code retryAfter} is out of that range
	 */
	public RateLimitedException(Duration retryAfter) {
		this(retryAfter, Scope.QUEUE);
	}

	/**
	 * Create an exception that holds the queue or only the task's rate key.
	 * @param retryAfter how long to hold: more than zero, at most
	 * {@link #LONGEST_RETRY_AFTER}; rounded up to whole milliseconds
	 * @param scope what to hold
	 * @throws IllegalArgumentException when {@code retryAfter} is out of that range or
	 * {@code scope} is {@code null}
	 */
	public RateLimitedException(Duration retryAfter, Scope scope) {
		super(message(retryAfter, scope));
		this.retryAfter = check(retryAfter);
		this.scope = scope;
	}

	/**
	 * Create an exception with a cause.
	 * @param retryAfter how long to hold the queue: more than zero, at most
	 * {@link #LONGEST_RETRY_AFTER}; rounded up to whole milliseconds
	 * @param cause what the downstream said
	 * @throws IllegalArgumentException when {@code retryAfter} is out of that range
	 */
	public RateLimitedException(Duration retryAfter, Throwable cause) {
		this(retryAfter, Scope.QUEUE, cause);
	}

	/**
	 * Create an exception with a cause that holds the queue or only the task's rate key.
	 * @param retryAfter how long to hold: more than zero, at most
	 * {@link #LONGEST_RETRY_AFTER}; rounded up to whole milliseconds
	 * @param scope what to hold
	 * @param cause what the downstream said
	 * @throws IllegalArgumentException when {@code retryAfter} is out of that range or
	 * {@code scope} is {@code null}
	 */
	public RateLimitedException(Duration retryAfter, Scope scope, Throwable cause) {
		super(message(retryAfter, scope), cause);
		this.retryAfter = check(retryAfter);
		this.scope = scope;
	}

	/**
	 * How long the queue is held: the value checked when the exception was created
	 * (final, so a subclass cannot hand the worker another one).
	 * @return the hold, whole milliseconds
	 */
	public final Duration retryAfter() {
		return this.retryAfter;
	}

	/**
	 * What is held: the value given when the exception was created (final, as
	 * {@link #retryAfter()}).
	 * @return the scope
	 */
	public final Scope scope() {
		return this.scope;
	}

	private static String message(Duration retryAfter, Scope scope) {
		if (scope == null) {
			throw new IllegalArgumentException("scope must not be null");
		}
		return "Rate limited: the " + ((scope == Scope.KEY) ? "task's rate key" : "queue") + " is held for "
				+ check(retryAfter).toMillis() + " ms";
	}

	private static Duration check(Duration retryAfter) {
		if (retryAfter == null || retryAfter.isNegative() || retryAfter.isZero()) {
			throw new IllegalArgumentException("retryAfter must be more than zero, but was " + retryAfter);
		}
		if (retryAfter.compareTo(LONGEST_RETRY_AFTER) > 0) {
			throw new IllegalArgumentException(
					"retryAfter must be at most " + LONGEST_RETRY_AFTER + ", but was " + retryAfter);
		}
		Duration millis = Duration.ofMillis(retryAfter.toMillis());
		return millis.equals(retryAfter) ? millis : millis.plusMillis(1);
	}

	/**
	 * What a {@link RateLimitedException} holds.
	 *
	 * @since 0.1.0
	 */
	public enum Scope {

		/** The whole queue, on every instance. */
		QUEUE,

		/**
		 * Only the task's rate key, on every instance: the queue's other keys run on. A
		 * task without a rate key, or on a queue without a {@code key-rate-limit}, holds
		 * the whole queue instead, the safe side.
		 */
		KEY

	}

}

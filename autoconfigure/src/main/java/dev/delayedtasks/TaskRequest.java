package dev.delayedtasks;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Everything about one task to schedule. Immutable: each {@code with}-style method
 * returns a new request.
 *
 * <pre class="code">
 * TaskRequest.of("emails", email).delay(Duration.ofMinutes(10)).id("order-42-reminder")
 * 		.uniqueFor(Duration.ofHours(1)).maxAttempts(5).header("tenant", "acme");
 * </pre>
 *
 * @param queue the queue
 * @param payload the payload, serialized to JSON; {@code null} only for requests made
 * with {@link #of(String)}
 * @param delay the delay from Redis's "now", or {@code null}
 * @param runAt the instant to run at, compared with Redis time, or {@code null}
 * @param id a caller-supplied id, or {@code null} to generate one
 * @param uniqueKey the key that makes this task unique, or {@code null} to use the
 * payload when {@code uniqueFor} is set
 * @param uniqueFor how long a second request with the same unique key is answered with
 * this task instead of creating another, or {@code null} for no uniqueness
 * @param maxAttempts how many times the task may run before it is dead-lettered, or
 * {@code null} for the handler's retry policy
 * @param headers string headers that travel beside the payload
 * @param sending when the task is sent inside a Spring-managed transaction: see
 * {@link #afterCommit()}
 * @param expiresAt the instant, in Redis time, from which the task is never run, or
 * {@code null}
 * @param expireAfter how long after it is stored, by Redis's clock, the task is never run
 * any more, or {@code null}
 * @param rateKey the key whose rate limit the task's start counts against
 * ({@code delayed-tasks.queues.<queue>.key-rate-limit}), or {@code null}
 * @param cost how many starts the task's start counts against the queue's rate limits, or
 * {@code null} for 1
 * @param priority the task's place among the queue's due tasks, from
 * {@value #MIN_PRIORITY} to {@value #MAX_PRIORITY}, higher first, or {@code null} for
 * {@value #DEFAULT_PRIORITY}
 * @author delayed-tasks
 * @since 0.1.0
 */
public record TaskRequest(String queue, @Nullable Object payload, @Nullable Duration delay, @Nullable Instant runAt,
		@Nullable TaskId id, @Nullable String uniqueKey, @Nullable Duration uniqueFor, @Nullable Integer maxAttempts,
		Map<String, String> headers, Sending sending, @Nullable Instant expiresAt, @Nullable Duration expireAfter,
		@Nullable String rateKey, @Nullable Integer cost, @Nullable Integer priority) {

	/** The lowest priority a task can have. */
	public static final int MIN_PRIORITY = -10;

	/** The priority of a task that names none. */
	public static final int DEFAULT_PRIORITY = 0;

	/** The highest priority a task can have. */
	public static final int MAX_PRIORITY = 10;

	/**
	 * Create a request, copying the headers.
	 * @param queue the queue
	 * @param payload the payload, serialized to JSON; {@code null} only for requests made
	 * with {@link #of(String)}
	 * @param delay the delay from Redis's "now", or {@code null}
	 * @param runAt the instant to run at, compared with Redis time, or {@code null}
	 * @param id a caller-supplied id, or {@code null} to generate one
	 * @param uniqueKey the key that makes this task unique, or {@code null} to use the
	 * payload when {@code uniqueFor} is set
	 * @param uniqueFor how long a second request with the same unique key is answered
	 * with this task instead of creating another, or {@code null} for no uniqueness
	 * @param maxAttempts how many times the task may run before it is dead-lettered, or
	 * {@code null} for the handler's retry policy
	 * @param headers string headers that travel beside the payload
	 * @param sending when the task is sent inside a Spring-managed transaction: see
	 * {@link #afterCommit()}
	 * @param expiresAt the instant, in Redis time, from which the task is never run, or
	 * {@code null}
	 * @param expireAfter how long after it is stored, by Redis's clock, the task is never
	 * run any more, or {@code null}
	 * @param rateKey the key whose rate limit the task's start counts against, or
	 * {@code null}
	 * @param cost how many starts the task's start counts against the rate limits, or
	 * {@code null} for 1
	 * @param priority the task's place among the queue's due tasks, higher first, or
	 * {@code null} for {@value #DEFAULT_PRIORITY}
	 */
	public TaskRequest {
		headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
		sending = (sending != null) ? sending : Sending.DEFAULT;
	}

	/**
	 * Create a request of the default priority.
	 * @param queue the queue
	 * @param payload the payload
	 * @param delay the delay, or {@code null}
	 * @param runAt the instant, or {@code null}
	 * @param id a caller-supplied id, or {@code null}
	 * @param uniqueKey the unique key, or {@code null}
	 * @param uniqueFor the uniqueness window, or {@code null}
	 * @param maxAttempts the max attempts, or {@code null}
	 * @param headers the headers
	 * @param sending when the task is sent inside a Spring-managed transaction
	 * @param expiresAt the expiry instant, or {@code null}
	 * @param expireAfter the expiry after storing, or {@code null}
	 * @param rateKey the rate key, or {@code null}
	 * @param cost the cost, or {@code null}
	 */
	public TaskRequest(String queue, @Nullable Object payload, @Nullable Duration delay, @Nullable Instant runAt,
			@Nullable TaskId id, @Nullable String uniqueKey, @Nullable Duration uniqueFor,
			@Nullable Integer maxAttempts, Map<String, String> headers, Sending sending, @Nullable Instant expiresAt,
			@Nullable Duration expireAfter, @Nullable String rateKey, @Nullable Integer cost) {
		this(queue, payload, delay, runAt, id, uniqueKey, uniqueFor, maxAttempts, headers, sending, expiresAt,
				expireAfter, rateKey, cost, null);
	}

	/**
	 * Create a request without a rate key.
	 * @param queue the queue
	 * @param payload the payload
	 * @param delay the delay, or {@code null}
	 * @param runAt the instant, or {@code null}
	 * @param id a caller-supplied id, or {@code null}
	 * @param uniqueKey the unique key, or {@code null}
	 * @param uniqueFor the uniqueness window, or {@code null}
	 * @param maxAttempts the max attempts, or {@code null}
	 * @param headers the headers
	 * @param sending when the task is sent inside a Spring-managed transaction
	 * @param expiresAt the expiry instant, or {@code null}
	 * @param expireAfter the expiry after storing, or {@code null}
	 */
	public TaskRequest(String queue, @Nullable Object payload, @Nullable Duration delay, @Nullable Instant runAt,
			@Nullable TaskId id, @Nullable String uniqueKey, @Nullable Duration uniqueFor,
			@Nullable Integer maxAttempts, Map<String, String> headers, Sending sending, @Nullable Instant expiresAt,
			@Nullable Duration expireAfter) {
		this(queue, payload, delay, runAt, id, uniqueKey, uniqueFor, maxAttempts, headers, sending, expiresAt,
				expireAfter, null, null, null);
	}

	/**
	 * Create a request without expiry.
	 * @param queue the queue
	 * @param payload the payload
	 * @param delay the delay, or {@code null}
	 * @param runAt the instant, or {@code null}
	 * @param id a caller-supplied id, or {@code null}
	 * @param uniqueKey the unique key, or {@code null}
	 * @param uniqueFor the uniqueness window, or {@code null}
	 * @param maxAttempts the max attempts, or {@code null}
	 * @param headers the headers
	 * @param sending when the task is sent inside a Spring-managed transaction
	 */
	public TaskRequest(String queue, @Nullable Object payload, @Nullable Duration delay, @Nullable Instant runAt,
			@Nullable TaskId id, @Nullable String uniqueKey, @Nullable Duration uniqueFor,
			@Nullable Integer maxAttempts, Map<String, String> headers, Sending sending) {
		this(queue, payload, delay, runAt, id, uniqueKey, uniqueFor, maxAttempts, headers, sending, null, null);
	}

	/**
	 * Create a request that is sent as {@code delayed-tasks.producer.after-commit} says.
	 * @param queue the queue
	 * @param payload the payload
	 * @param delay the delay, or {@code null}
	 * @param runAt the instant, or {@code null}
	 * @param id a caller-supplied id, or {@code null}
	 * @param uniqueKey the unique key, or {@code null}
	 * @param uniqueFor the uniqueness window, or {@code null}
	 * @param maxAttempts the max attempts, or {@code null}
	 * @param headers the headers
	 */
	public TaskRequest(String queue, @Nullable Object payload, @Nullable Duration delay, @Nullable Instant runAt,
			@Nullable TaskId id, @Nullable String uniqueKey, @Nullable Duration uniqueFor,
			@Nullable Integer maxAttempts, Map<String, String> headers) {
		this(queue, payload, delay, runAt, id, uniqueKey, uniqueFor, maxAttempts, headers, Sending.DEFAULT);
	}

	/**
	 * A request to run {@code payload} on {@code queue} as soon as possible.
	 * @param queue the queue
	 * @param payload the payload, not {@code null}
	 * @return the request
	 * @throws InvalidTaskRequestException if the payload is {@code null}
	 */
	public static TaskRequest of(String queue, Object payload) {
		if (payload == null) {
			throw new InvalidTaskRequestException("Payload of a task for queue '" + queue
					+ "' is null: pass a value, or use TaskRequest.of(queue) for a task without payload");
		}
		return new TaskRequest(queue, payload, null, null, null, null, null, null, Map.of());
	}

	/**
	 * A request for a task without payload, for handlers that take only a
	 * {@code TaskContext}.
	 * @param queue the queue
	 * @return the request
	 */
	public static TaskRequest of(String queue) {
		return new TaskRequest(queue, null, null, null, null, null, null, null, Map.of());
	}

	/**
	 * Run after {@code delay}, counted from Redis's clock when the task is stored.
	 * Replaces any {@link #at(Instant)}.
	 * @param delay the delay, zero or positive
	 * @return a new request
	 */
	public TaskRequest delay(Duration delay) {
		return new TaskRequest(this.queue, this.payload, delay, null, this.id, this.uniqueKey, this.uniqueFor,
				this.maxAttempts, this.headers, this.sending, this.expiresAt, this.expireAfter, this.rateKey, this.cost,
				this.priority);
	}

	/**
	 * Run at {@code runAt}, compared with Redis's clock; an instant in the past runs at
	 * once. Replaces any {@link #delay(Duration)}.
	 * @param runAt the instant
	 * @return a new request
	 */
	public TaskRequest at(Instant runAt) {
		return new TaskRequest(this.queue, this.payload, null, runAt, this.id, this.uniqueKey, this.uniqueFor,
				this.maxAttempts, this.headers, this.sending, this.expiresAt, this.expireAfter, this.rateKey, this.cost,
				this.priority);
	}

	/**
	 * Use a caller-supplied id: scheduling it again while the task exists returns the
	 * existing task.
	 * @param id the id
	 * @return a new request
	 */
	public TaskRequest id(String id) {
		return id(TaskId.of(id));
	}

	/**
	 * Use a caller-supplied id: scheduling it again while the task exists returns the
	 * existing task.
	 * @param id the id
	 * @return a new request
	 */
	public TaskRequest id(TaskId id) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, id, this.uniqueKey, this.uniqueFor,
				this.maxAttempts, this.headers, this.sending, this.expiresAt, this.expireAfter, this.rateKey, this.cost,
				this.priority);
	}

	/**
	 * Make the task unique by an explicit key (combine with
	 * {@link #uniqueFor(Duration)}).
	 * @param uniqueKey the key, for example {@code user-7-welcome}
	 * @return a new request
	 */
	public TaskRequest uniqueKey(String uniqueKey) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, uniqueKey, this.uniqueFor,
				this.maxAttempts, this.headers, this.sending, this.expiresAt, this.expireAfter, this.rateKey, this.cost,
				this.priority);
	}

	/**
	 * For this long, or until the task completes, is cancelled or is dead-lettered, a
	 * request with the same unique key (by default the queue and the payload) returns
	 * this task instead of creating another.
	 * @param uniqueFor the window, positive
	 * @return a new request
	 */
	public TaskRequest uniqueFor(Duration uniqueFor) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, this.uniqueKey, uniqueFor,
				this.maxAttempts, this.headers, this.sending, this.expiresAt, this.expireAfter, this.rateKey, this.cost,
				this.priority);
	}

	/**
	 * How many times the task may run in all (first run plus retries) before it is
	 * dead-lettered. Overrides the handler's retry policy.
	 * @param maxAttempts at least 1
	 * @return a new request
	 */
	public TaskRequest maxAttempts(int maxAttempts) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, this.uniqueKey,
				this.uniqueFor, maxAttempts, this.headers, this.sending, this.expiresAt, this.expireAfter, this.rateKey,
				this.cost, this.priority);
	}

	/**
	 * Add a header that travels beside the payload.
	 * @param name the name
	 * @param value the value
	 * @return a new request
	 */
	public TaskRequest header(String name, String value) {
		Map<String, String> copy = new LinkedHashMap<>(this.headers);
		copy.put(name, value);
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, this.uniqueKey,
				this.uniqueFor, this.maxAttempts, copy, this.sending, this.expiresAt, this.expireAfter, this.rateKey,
				this.cost, this.priority);
	}

	/**
	 * Never run the task from {@code expiresAt} on, compared with Redis's clock: a task
	 * that has not started by then (its first run, or a retry) ends as
	 * {@link FailureReason#EXPIRED expired} instead, kept as a dead letter or dropped
	 * ({@code delayed-tasks.expiry.dead-letter}). A run under way is not stopped.
	 * Replaces any {@link #expireAfter(Duration)}.
	 * @param expiresAt the instant, after the time the task is due
	 * @return a new request
	 * @since 0.1.0
	 */
	public TaskRequest expiresAt(Instant expiresAt) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, this.uniqueKey,
				this.uniqueFor, this.maxAttempts, this.headers, this.sending, expiresAt, null, this.rateKey, this.cost,
				this.priority);
	}

	/**
	 * Never run the task once {@code expireAfter} has passed since it was stored, by
	 * Redis's clock; otherwise as {@link #expiresAt(Instant)}. Replaces any
	 * {@link #expiresAt(Instant)}.
	 * @param expireAfter the time to live, positive and longer than the delay
	 * @return a new request
	 * @since 0.1.0
	 */
	public TaskRequest expireAfter(Duration expireAfter) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, this.uniqueKey,
				this.uniqueFor, this.maxAttempts, this.headers, this.sending, null, expireAfter, this.rateKey,
				this.cost, this.priority);
	}

	/**
	 * Count the task's start as {@code cost} starts against the queue's
	 * {@code rate-limit} and its rate key's {@code key-rate-limit} (a call that costs
	 * several units of a downstream quota); a cost above a limit's count counts as that
	 * count. The global concurrency counts every task once.
	 * @param cost 1 to 1000, checked when the task is scheduled
	 * @return a new request
	 */
	public TaskRequest cost(int cost) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, this.uniqueKey,
				this.uniqueFor, this.maxAttempts, this.headers, this.sending, this.expiresAt, this.expireAfter,
				this.rateKey, cost, this.priority);
	}

	/**
	 * Claim the task before the queue's due tasks of a lower priority: among the tasks
	 * that are due, a higher priority runs first and tasks of one priority run in the
	 * order they fell due. Priority orders only what is due (a scheduled task still waits
	 * for its due time) and is strict: while tasks of a higher priority are ready, lower
	 * ones wait, however long.
	 * @param priority {@value #MIN_PRIORITY} to {@value #MAX_PRIORITY}, higher first
	 * ({@value #DEFAULT_PRIORITY} when not set), checked when the task is scheduled
	 * @return a new request
	 */
	public TaskRequest priority(int priority) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, this.uniqueKey,
				this.uniqueFor, this.maxAttempts, this.headers, this.sending, this.expiresAt, this.expireAfter,
				this.rateKey, this.cost, priority);
	}

	/**
	 * Count the task's start against the rate limit of {@code rateKey}
	 * ({@code delayed-tasks.queues.<queue>.key-rate-limit}, for example one customer's
	 * quota at a partner API): while that key is at its limit, its tasks are set aside
	 * until it has room and the queue's other tasks run on. Without a key rate limit on
	 * the queue, the key changes nothing.
	 * @param rateKey 1 to 64 ASCII letters, digits, {@code .}, {@code -}, {@code _} or
	 * {@code :}, checked when the task is scheduled
	 * @return a new request
	 */
	public TaskRequest rateKey(String rateKey) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, this.uniqueKey,
				this.uniqueFor, this.maxAttempts, this.headers, this.sending, this.expiresAt, this.expireAfter, rateKey,
				this.cost, this.priority);
	}

	/**
	 * Send the task only when the surrounding Spring-managed transaction commits, and
	 * never when it rolls back. The request is validated and its payload serialized at
	 * the call, inside the transaction, so bad input still throws there; the call returns
	 * a {@link ScheduleResult.Outcome#PENDING PENDING} result with the id the task will
	 * have. Outside a transaction (no transaction synchronization active) the task is
	 * sent at once, as without this option. A send that fails after the commit cannot
	 * throw to the caller any more: it is logged, counted and reported to
	 * {@link DelayedTaskListener#afterCommitFailed(String, TaskId, Throwable)}.
	 * @return a new request
	 * @since 0.1.0
	 */
	public TaskRequest afterCommit() {
		return afterCommit(true);
	}

	/**
	 * Whether to send the task only when the surrounding transaction commits
	 * ({@link #afterCommit()}), or at once even inside a transaction: {@code false}
	 * overrides {@code delayed-tasks.producer.after-commit=true} for this request.
	 * @param afterCommit whether to wait for the commit
	 * @return a new request
	 * @since 0.1.0
	 */
	public TaskRequest afterCommit(boolean afterCommit) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, this.uniqueKey,
				this.uniqueFor, this.maxAttempts, this.headers, afterCommit ? Sending.AFTER_COMMIT : Sending.AT_ONCE,
				this.expiresAt, this.expireAfter, this.rateKey, this.cost, this.priority);
	}

	/**
	 * When a request is sent to Redis inside a Spring-managed transaction. Outside one,
	 * every request is sent at once.
	 *
	 * @since 0.1.0
	 */
	public enum Sending {

		/**
		 * As {@code delayed-tasks.producer.after-commit} says (at once unless it is
		 * {@code true}).
		 */
		DEFAULT,

		/** When the transaction commits; never when it rolls back. */
		AFTER_COMMIT,

		/** At once, whatever the transaction does later. */
		AT_ONCE

	}

}

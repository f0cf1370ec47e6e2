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
 * @author delayed-tasks
 * @since 0.1.0
 */
public record TaskRequest(String queue, @Nullable Object payload, @Nullable Duration delay, @Nullable Instant runAt,
		@Nullable TaskId id, @Nullable String uniqueKey, @Nullable Duration uniqueFor, @Nullable Integer maxAttempts,
		Map<String, String> headers) {

	/**
	 * Create a request, copying the headers.
	 */
	public TaskRequest {
		headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
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
				this.maxAttempts, this.headers);
	}

	/**
	 * Run at {@code runAt}, compared with Redis's clock; an instant in the past runs at
	 * once. Replaces any {@link #delay(Duration)}.
	 * @param runAt the instant
	 * @return a new request
	 */
	public TaskRequest at(Instant runAt) {
		return new TaskRequest(this.queue, this.payload, null, runAt, this.id, this.uniqueKey, this.uniqueFor,
				this.maxAttempts, this.headers);
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
				this.maxAttempts, this.headers);
	}

	/**
	 * Make the task unique by an explicit key (combine with
	 * {@link #uniqueFor(Duration)}).
	 * @param uniqueKey the key, for example {@code user-7-welcome}
	 * @return a new request
	 */
	public TaskRequest uniqueKey(String uniqueKey) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, uniqueKey, this.uniqueFor,
				this.maxAttempts, this.headers);
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
				this.maxAttempts, this.headers);
	}

	/**
	 * How many times the task may run in all (first run plus retries) before it is
	 * dead-lettered. Overrides the handler's retry policy.
	 * @param maxAttempts at least 1
	 * @return a new request
	 */
	public TaskRequest maxAttempts(int maxAttempts) {
		return new TaskRequest(this.queue, this.payload, this.delay, this.runAt, this.id, this.uniqueKey,
				this.uniqueFor, maxAttempts, this.headers);
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
				this.uniqueFor, this.maxAttempts, copy);
	}

}

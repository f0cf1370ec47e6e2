package dev.delayedtasks;

import java.time.Instant;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * What a handler knows about the run it is in. Declare it as a handler parameter to
 * receive it.
 *
 * @param id the task's id
 * @param queue the queue
 * @param attempt which run this is: 1 for the first, 2 for the first retry, ...
 * @param deliveryCount how many times a worker claimed the task, this claim included
 * (more than {@code attempt} when a worker crashed or shut down while running it)
 * @param dueAt when the task was due, Redis time
 * @param createdAt when the task was scheduled, Redis time
 * @param startedAt when this run started, Redis time as seen by the claim
 * @param headers the headers sent with the task
 * @param leaseToken the fencing token of this run; pass it downstream to reject writes
 * from a run that lost its lease
 * @author delayed-tasks
 * @since 0.1.0
 */
public record TaskContext(TaskId id, String queue, int attempt, int deliveryCount, Instant dueAt, Instant createdAt,
		Instant startedAt, Map<String, String> headers, String leaseToken) {

	/**
	 * Create a context, copying the headers.
	 * @param id the task's id
	 * @param queue the queue
	 * @param attempt which run this is: 1 for the first, 2 for the first retry, ...
	 * @param deliveryCount how many times a worker claimed the task, this claim included
	 * (more than {@code attempt} when a worker crashed or shut down while running it)
	 * @param dueAt when the task was due, Redis time
	 * @param createdAt when the task was scheduled, Redis time
	 * @param startedAt when this run started, Redis time as seen by the claim
	 * @param headers the headers sent with the task
	 * @param leaseToken the fencing token of this run; pass it downstream to reject
	 * writes from a run that lost its lease
	 */
	public TaskContext {
		headers = Map.copyOf(headers);
	}

	/**
	 * A header's value.
	 * @param name the header name
	 * @return the value, or {@code null}
	 */
	public @Nullable String header(String name) {
		return this.headers.get(name);
	}

}

package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.Names;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.PreparedTask;

/**
 * The asynchronous API of {@link RedisDelayedTaskScheduler} when it has a reactive
 * connection: requests are validated on the calling thread, held there for the commit of
 * its transaction when they ask for it, and otherwise sent without blocking
 * ({@link AsyncScheduling}). A change to a task that the calling thread's transaction
 * holds is made by the blocking method, on that thread.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class AsyncRequests {

	private final AsyncScheduling async;

	private final AfterCommitSends afterCommit;

	private final ScheduleObservations observations;

	private final BiFunction<TaskRequest, Map<String, String>, PreparedTask> prepare;

	private final DelayedTaskScheduler blocking;

	/**
	 * Create the asynchronous API.
	 * @param async sends on the reactive connection
	 * @param afterCommit holds tasks for the commit of the caller's transaction
	 * @param observations observes scheduling
	 * @param prepare validates a request, given the trace headers
	 * @param blocking the blocking API, for tasks held by the caller's transaction
	 */
	AsyncRequests(AsyncScheduling async, AfterCommitSends afterCommit, ScheduleObservations observations,
			BiFunction<TaskRequest, Map<String, String>, PreparedTask> prepare, DelayedTaskScheduler blocking) {
		this.async = async;
		this.afterCommit = afterCommit;
		this.observations = observations;
		this.prepare = prepare;
		this.blocking = blocking;
	}

	/**
	 * Tasks accepted and not stored yet.
	 * @return the count
	 */
	int accepted() {
		return this.async.accepted();
	}

	/**
	 * A task this instance holds, not stored yet.
	 * @param queue the queue, checked
	 * @param id the task
	 * @return the task in state {@code HELD}, or empty
	 */
	Optional<TaskInfo> held(String queue, TaskId id) {
		return this.async.held(queue, id);
	}

	/**
	 * Take back a task this instance holds, not stored yet.
	 * @param queue the queue, checked
	 * @param id the task
	 * @return whether it held the task
	 */
	boolean withdraw(String queue, TaskId id) {
		return this.async.withdraw(queue, id);
	}

	/**
	 * Give the accepted tasks a last chance to be stored, then report what is left.
	 */
	void close() {
		this.async.close();
	}

	CompletableFuture<ScheduleResult> submit(TaskRequest request) {
		return this.observations.observeAsync(request.queue(), 1, (trace) -> {
			PreparedTask task = this.prepare.apply(request, trace);
			if (this.afterCommit.defers(request)) {
				// Held on this thread, whose transaction decides: sent after its commit.
				return CompletableFuture.completedFuture(this.afterCommit.defer(task));
			}
			return this.async.submit(task);
		});
	}

	CompletableFuture<List<ScheduleResult>> scheduleAll(Collection<TaskRequest> requests) {
		if (requests.isEmpty()) {
			return CompletableFuture.completedFuture(List.of());
		}
		return this.observations.observeAsync(requests.iterator().next().queue(), requests.size(), (trace) -> {
			// Every request is validated before anything is sent or held.
			List<PreparedTask> prepared = new ArrayList<>(requests.size());
			List<Boolean> held = new ArrayList<>(requests.size());
			for (TaskRequest request : requests) {
				prepared.add(this.prepare.apply(request, trace));
				held.add(this.afterCommit.defers(request));
			}
			List<PreparedTask> now = new ArrayList<>();
			for (int i = 0; i < prepared.size(); i++) {
				if (held.get(i)) {
					// On this thread, whose transaction synchronization holds them;
					// unlike
					// the blocking scheduleAll, before the others are stored: the reply
					// comes on another thread. A failed send of the others fails the
					// future, and the caller decides whether its transaction commits.
					this.afterCommit.defer(prepared.get(i));
				}
				else {
					now.add(prepared.get(i));
				}
			}
			if (now.size() == prepared.size()) {
				return this.async.scheduleAll(prepared);
			}
			return this.async.scheduleAll(now).thenApply((sent) -> {
				List<ScheduleResult> results = new ArrayList<>(prepared.size());
				int next = 0;
				for (int i = 0; i < prepared.size(); i++) {
					results.add(held.get(i) ? ScheduleResult.pending(prepared.get(i).id()) : sent.get(next++));
				}
				return results;
			});
		});
	}

	CompletableFuture<Boolean> cancel(String queue, TaskId id) {
		if (holdsForCommit(queue, id)) {
			return failIfInvalid(() -> CompletableFuture.completedFuture(this.blocking.cancel(queue, id)));
		}
		return failIfInvalid(() -> this.async.cancel(Names.checkQueue(queue), id));
	}

	CompletableFuture<Boolean> reschedule(String queue, TaskId id, Duration delay) {
		if (holdsForCommit(queue, id)) {
			return failIfInvalid(() -> CompletableFuture.completedFuture(this.blocking.reschedule(queue, id, delay)));
		}
		return failIfInvalid(() -> this.async.reschedule(Names.checkQueue(queue), id, delay, null));
	}

	CompletableFuture<Boolean> reschedule(String queue, TaskId id, Instant runAt) {
		if (holdsForCommit(queue, id)) {
			return failIfInvalid(() -> CompletableFuture.completedFuture(this.blocking.reschedule(queue, id, runAt)));
		}
		return failIfInvalid(() -> this.async.reschedule(Names.checkQueue(queue), id, null, runAt));
	}

	CompletableFuture<Optional<TaskInfo>> find(String queue, TaskId id) {
		return failIfInvalid(() -> this.async.find(Names.checkQueue(queue), id));
	}

	/**
	 * Whether this thread's transaction holds the task for its commit: its change is then
	 * made by the blocking method on this thread, since the held tasks belong to the
	 * thread of the transaction, and changed only after Redis answered.
	 * @param queue the queue
	 * @param id the task
	 * @return whether the calling thread's transaction holds it
	 */
	private boolean holdsForCommit(String queue, TaskId id) {
		return this.afterCommit.holds(queue, id);
	}

	private static <T> CompletableFuture<T> failIfInvalid(Supplier<CompletableFuture<T>> call) {
		return ScheduleObservations.failIfInvalid(call);
	}

}

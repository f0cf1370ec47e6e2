package dev.delayedtasks;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The {@link DelayedTaskScheduler} for reactive applications (WebFlux): every method
 * returns a {@link Mono} or {@link Flux} that does nothing until it is subscribed to, and
 * then sends its request on Redis's reactive connection without blocking a thread.
 * Invalid input signals {@link InvalidTaskRequestException} before anything is sent; a
 * Redis failure signals {@link TaskStoreException}. Signals arrive on a Redis I/O thread.
 * Auto-configured when Reactor is on the class path.
 *
 * @author delayed-tasks
 * @since 0.1.0
 * @see DelayedTaskScheduler
 */
public interface ReactiveDelayedTaskScheduler {

	/**
	 * Run {@code payload} on {@code queue} after {@code delay}.
	 * @param queue the queue
	 * @param payload the payload, serialized to JSON
	 * @param delay the delay, zero or positive
	 * @return the new task's id
	 */
	default Mono<TaskId> schedule(String queue, Object payload, Duration delay) {
		return Mono.defer(() -> schedule(TaskRequest.of(queue, payload).delay(delay)));
	}

	/**
	 * Run {@code payload} on {@code queue} at {@code runAt}.
	 * @param queue the queue
	 * @param payload the payload, serialized to JSON
	 * @param runAt the instant
	 * @return the new task's id
	 */
	default Mono<TaskId> schedule(String queue, Object payload, Instant runAt) {
		return Mono.defer(() -> schedule(TaskRequest.of(queue, payload).at(runAt)));
	}

	/**
	 * Run {@code payload} on {@code queue} as soon as a worker is free.
	 * @param queue the queue
	 * @param payload the payload, serialized to JSON
	 * @return the new task's id
	 */
	default Mono<TaskId> enqueue(String queue, Object payload) {
		return Mono.defer(() -> schedule(TaskRequest.of(queue, payload)));
	}

	/**
	 * Schedule a request with all its options.
	 * @param request the request
	 * @return the id of the task that stands for the request
	 */
	default Mono<TaskId> schedule(TaskRequest request) {
		return submit(request).map(ScheduleResult::id);
	}

	/**
	 * Schedule a request and say whether it created a task.
	 * @param request the request
	 * @return the id and whether it was created, existed, or was a duplicate
	 */
	Mono<ScheduleResult> submit(TaskRequest request);

	/**
	 * Schedule many requests; see {@link DelayedTaskScheduler#scheduleAll(Collection)}.
	 * @param requests the requests
	 * @return one result per request, in order
	 */
	Flux<ScheduleResult> scheduleAll(Collection<TaskRequest> requests);

	/**
	 * Cancel a task that is scheduled or ready.
	 * @param queue the queue
	 * @param id the task
	 * @return {@code true} if it was scheduled or ready and is gone now
	 */
	Mono<Boolean> cancel(String queue, TaskId id);

	/**
	 * Move a scheduled or ready task to a new due time, {@code delay} from Redis's now.
	 * @param queue the queue
	 * @param id the task
	 * @param delay the delay, zero or positive
	 * @return {@code true} if it was scheduled or ready and was moved
	 */
	Mono<Boolean> reschedule(String queue, TaskId id, Duration delay);

	/**
	 * Move a scheduled or ready task to a new due time.
	 * @param queue the queue
	 * @param id the task
	 * @param runAt the new due time
	 * @return {@code true} if it was scheduled or ready and was moved
	 */
	Mono<Boolean> reschedule(String queue, TaskId id, Instant runAt);

	/**
	 * Look a task up.
	 * @param queue the queue
	 * @param id the task
	 * @return the task, or empty when it does not exist
	 */
	Mono<TaskInfo> find(String queue, TaskId id);

	/**
	 * The reactive form of a scheduler's {@code ...Async} methods: each {@code Mono}
	 * calls the scheduler when it is subscribed to.
	 * @param scheduler the scheduler
	 * @return the reactive scheduler
	 */
	static ReactiveDelayedTaskScheduler of(DelayedTaskScheduler scheduler) {
		return new FutureReactiveDelayedTaskScheduler(scheduler);
	}

}

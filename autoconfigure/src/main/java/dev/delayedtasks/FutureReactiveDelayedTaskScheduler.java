package dev.delayedtasks;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A {@link ReactiveDelayedTaskScheduler} on a {@link DelayedTaskScheduler}'s
 * {@code ...Async} methods, which the Redis scheduler runs on the reactive connection.
 * Nothing is validated or sent before subscription.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class FutureReactiveDelayedTaskScheduler implements ReactiveDelayedTaskScheduler {

	private final DelayedTaskScheduler scheduler;

	FutureReactiveDelayedTaskScheduler(DelayedTaskScheduler scheduler) {
		this.scheduler = scheduler;
	}

	@Override
	public Mono<ScheduleResult> submit(TaskRequest request) {
		return Mono.fromFuture(() -> this.scheduler.submitAsync(request));
	}

	@Override
	public Flux<ScheduleResult> scheduleAll(Collection<TaskRequest> requests) {
		return Mono.fromFuture(() -> this.scheduler.scheduleAllAsync(requests)).flatMapIterable((results) -> results);
	}

	@Override
	public Mono<Boolean> cancel(String queue, TaskId id) {
		return Mono.fromFuture(() -> this.scheduler.cancelAsync(queue, id));
	}

	@Override
	public Mono<Boolean> reschedule(String queue, TaskId id, Duration delay) {
		return Mono.fromFuture(() -> this.scheduler.rescheduleAsync(queue, id, delay));
	}

	@Override
	public Mono<Boolean> reschedule(String queue, TaskId id, Instant runAt) {
		return Mono.fromFuture(() -> this.scheduler.rescheduleAsync(queue, id, runAt));
	}

	@Override
	public Mono<TaskInfo> find(String queue, TaskId id) {
		return Mono.fromFuture(() -> this.scheduler.findAsync(queue, id)).flatMap(Mono::justOrEmpty);
	}

}

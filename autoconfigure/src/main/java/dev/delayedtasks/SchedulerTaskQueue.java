package dev.delayedtasks;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.BiPredicate;

/**
 * A {@link TaskQueue} that checks each request and hands it to a
 * {@link DelayedTaskScheduler}.
 *
 * @param <T> the payload type
 * @author delayed-tasks
 * @since 0.1.0
 */
final class SchedulerTaskQueue<T> implements TaskQueue<T> {

	private final DelayedTaskScheduler scheduler;

	private final String name;

	private final Class<T> payloadType;

	private final BiPredicate<String, Class<?>> handlerCheck;

	/**
	 * Whether the queue's handler on this instance was found and takes these payloads;
	 * until then every call asks again, as handlers register while the context starts.
	 */
	private volatile boolean handlerChecked;

	/**
	 * Create a queue handle.
	 * @param scheduler the scheduler
	 * @param name the queue's name
	 * @param payloadType the payload type
	 * @param handlerCheck checks the payload type against the queue's handler: throws
	 * {@link InvalidTaskRequestException} when it does not fit, answers whether a handler
	 * was found
	 */
	SchedulerTaskQueue(DelayedTaskScheduler scheduler, String name, Class<T> payloadType,
			BiPredicate<String, Class<?>> handlerCheck) {
		this.name = Names.checkQueue(name);
		if (payloadType == null) {
			throw new InvalidTaskRequestException("Payload type of queue '" + name + "' must not be null");
		}
		if (payloadType.isPrimitive()) {
			throw new InvalidTaskRequestException(
					"Payload type of queue '" + name + "' is the primitive " + payloadType + ": use its wrapper class");
		}
		this.scheduler = scheduler;
		this.payloadType = payloadType;
		this.handlerCheck = handlerCheck;
		checkHandler();
	}

	@Override
	public String name() {
		return this.name;
	}

	@Override
	public Class<T> payloadType() {
		return this.payloadType;
	}

	@Override
	public TaskRequest request(T payload) {
		return TaskRequest.of(this.name, checkPayload(payload));
	}

	@Override
	public TaskId schedule(T payload, Duration delay) {
		return submit(request(payload).delay(delay)).id();
	}

	@Override
	public TaskId schedule(T payload, Instant runAt) {
		return submit(request(payload).at(runAt)).id();
	}

	@Override
	public TaskId enqueue(T payload) {
		return submit(request(payload)).id();
	}

	@Override
	public TaskId schedule(TaskRequest request) {
		return submit(request).id();
	}

	@Override
	public ScheduleResult submit(TaskRequest request) {
		return this.scheduler.submit(check(request));
	}

	@Override
	public List<ScheduleResult> scheduleAll(Collection<TaskRequest> requests) {
		requests.forEach(this::check);
		return this.scheduler.scheduleAll(requests);
	}

	@Override
	public boolean cancel(TaskId id) {
		return this.scheduler.cancel(this.name, id);
	}

	@Override
	public boolean reschedule(TaskId id, Duration delay) {
		return this.scheduler.reschedule(this.name, id, delay);
	}

	@Override
	public boolean reschedule(TaskId id, Instant runAt) {
		return this.scheduler.reschedule(this.name, id, runAt);
	}

	@Override
	public Optional<TaskInfo> find(TaskId id) {
		return this.scheduler.find(this.name, id);
	}

	private TaskRequest check(TaskRequest request) {
		if (!this.name.equals(request.queue())) {
			throw new InvalidTaskRequestException("Request for queue '" + request.queue()
					+ "' was given to the TaskQueue of queue '" + this.name + "': make it with request(payload)");
		}
		checkPayload(request.payload());
		return request;
	}

	private T checkPayload(Object payload) {
		if (payload == null) {
			throw new InvalidTaskRequestException(
					"Payload of a task for queue '" + this.name + "' is null: pass a " + this.payloadType.getName());
		}
		// Generics are erased: a raw TaskQueue or a request made elsewhere can carry any
		// type, and the queue's handler would dead-letter it as unreadable.
		if (!this.payloadType.isInstance(payload)) {
			throw new InvalidTaskRequestException("Payload of a task for queue '" + this.name + "' is a "
					+ payload.getClass().getName() + ", not a " + this.payloadType.getName());
		}
		checkHandler();
		return this.payloadType.cast(payload);
	}

	private void checkHandler() {
		if (!this.handlerChecked) {
			this.handlerChecked = this.handlerCheck.test(this.name, this.payloadType);
		}
	}

}

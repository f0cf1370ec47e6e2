package dev.delayedtasks;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.BiPredicate;

/**
 * One queue and its payload type, the way {@code KafkaTemplate<K, V>} ties a topic's
 * records to their types: made once with
 * {@link DelayedTaskScheduler#queue(String, Class)}, it checks the queue name when it is
 * made, and the payload type against the queue's handler when this application has one,
 * so that a typo or a wrong payload fails early and in one place.
 *
 * <pre class="code">
 * TaskQueue&lt;WelcomeEmail&gt; emails = scheduler.queue("emails", WelcomeEmail.class);
 * emails.schedule(new WelcomeEmail(userId), Duration.ofMinutes(10));
 * emails.submit(emails.request(email).id("welcome-" + userId).afterCommit());
 * </pre>
 *
 * Every method behaves as the {@link DelayedTaskScheduler} method of the same name on
 * this queue, and throws {@link InvalidTaskRequestException} for a request of another
 * queue or a payload of another type.
 *
 * @param <T> the payload type
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface TaskQueue<T> {

	/**
	 * The queue's name.
	 * @return the name
	 */
	String name();

	/**
	 * The type of this queue's payloads.
	 * @return the type
	 */
	Class<T> payloadType();

	/**
	 * A request for {@code payload} on this queue, to add options to and pass to
	 * {@link #submit(TaskRequest)} or {@link #schedule(TaskRequest)}.
	 * @param payload the payload
	 * @return the request
	 */
	TaskRequest request(T payload);

	/**
	 * Run {@code payload} after {@code delay}.
	 * @param payload the payload
	 * @param delay the delay, zero or positive
	 * @return the new task's id
	 */
	TaskId schedule(T payload, Duration delay);

	/**
	 * Run {@code payload} at {@code runAt}.
	 * @param payload the payload
	 * @param runAt the instant
	 * @return the new task's id
	 */
	TaskId schedule(T payload, Instant runAt);

	/**
	 * Run {@code payload} as soon as a worker is free.
	 * @param payload the payload
	 * @return the new task's id
	 */
	TaskId enqueue(T payload);

	/**
	 * Schedule a request of this queue with all its options.
	 * @param request the request, made with {@link #request(Object)}
	 * @return the id of the task that stands for the request
	 */
	TaskId schedule(TaskRequest request);

	/**
	 * Schedule a request of this queue and say whether it created a task.
	 * @param request the request, made with {@link #request(Object)}
	 * @return the id and the outcome
	 */
	ScheduleResult submit(TaskRequest request);

	/**
	 * Schedule many requests of this queue: see
	 * {@link DelayedTaskScheduler#scheduleAll(Collection)}.
	 * @param requests the requests
	 * @return one result per request, in order
	 */
	List<ScheduleResult> scheduleAll(Collection<TaskRequest> requests);

	/**
	 * Cancel a task of this queue that is scheduled or ready.
	 * @param id the task
	 * @return {@code true} if it was scheduled or ready and is gone now
	 */
	boolean cancel(TaskId id);

	/**
	 * Move a scheduled or ready task of this queue to {@code delay} from Redis's now.
	 * @param id the task
	 * @param delay the delay, zero or positive
	 * @return {@code true} if it was scheduled or ready and was moved
	 */
	boolean reschedule(TaskId id, Duration delay);

	/**
	 * Move a scheduled or ready task of this queue to a new due time.
	 * @param id the task
	 * @param runAt the new due time
	 * @return {@code true} if it was scheduled or ready and was moved
	 */
	boolean reschedule(TaskId id, Instant runAt);

	/**
	 * Look a task of this queue up.
	 * @param id the task
	 * @return the task, or empty when it does not exist
	 */
	Optional<TaskInfo> find(TaskId id);

	/**
	 * A handle on {@code queue} that checks each request and hands it to
	 * {@code scheduler}; for implementations of
	 * {@link DelayedTaskScheduler#queue(String, Class)}.
	 * @param <T> the payload type
	 * @param scheduler the scheduler
	 * @param queue the queue
	 * @param payloadType the payload type
	 * @param handlerCheck checks a payload type against the queue's handler: throws
	 * {@link InvalidTaskRequestException} when it does not fit, and answers whether a
	 * handler was found (until then it is asked again on each call)
	 * @return the handle
	 * @throws InvalidTaskRequestException if the queue name or the payload type is
	 * invalid
	 */
	static <T> TaskQueue<T> of(DelayedTaskScheduler scheduler, String queue, Class<T> payloadType,
			BiPredicate<String, Class<?>> handlerCheck) {
		return new SchedulerTaskQueue<>(scheduler, queue, payloadType, handlerCheck);
	}

}

package dev.delayedtasks.actuate;

import java.time.Duration;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.Names;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.QueueRemoval;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.ActionDescriptor;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

/**
 * The write operations of the {@link DelayedTasksEndpoint}: what an operator may do to a
 * queue or a task, and the checks of the names in the request, whose failures are invalid
 * requests (400) that say what is wrong.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class EndpointActions {

	private static final Set<String> QUEUE_ACTIONS = Set.of("pause", "resume", "redrive", "remove", "limits");

	private final DelayedTaskScheduler scheduler;

	private final DeadLetters deadLetters;

	private final QueueControl control;

	private final Predicate<String> isKnown;

	/**
	 * Create the actions.
	 * @param scheduler cancels tasks
	 * @param deadLetters the dead letters
	 * @param control pauses, resumes and removes queues
	 * @param isKnown whether a queue is handled here or in the index of known queues
	 */
	EndpointActions(DelayedTaskScheduler scheduler, DeadLetters deadLetters, QueueControl control,
			Predicate<String> isKnown) {
		this.scheduler = scheduler;
		this.deadLetters = deadLetters;
		this.control = control;
		this.isKnown = isKnown;
	}

	/**
	 * Act on a queue: {@code pause}, {@code resume}, {@code redrive} (all its dead
	 * letters), {@code remove} (from the index of known queues, when it is empty and no
	 * handler runs for it; a refusal is an invalid request whose message says why) or
	 * {@code limits} (its flow control: a limit left out is unchanged, {@code none} or 0
	 * removes one).
	 * @param queue the queue
	 * @param action the action
	 * @param rateLimit with {@code limits}: {@code count/window}, {@code none}, or
	 * {@code null} to keep it
	 * @param globalConcurrency with {@code limits}: the global concurrency, 0 for none,
	 * or {@code null} to keep it
	 * @param keyRateLimit with {@code limits}: {@code count/window}, {@code none}, or
	 * {@code null} to keep it
	 * @return what was done, or {@code null} when the queue is unknown
	 */
	@Nullable ActionDescriptor queueAction(String queue, String action, @Nullable String rateLimit,
			@Nullable Integer globalConcurrency, @Nullable String keyRateLimit) {
		checkQueue(queue);
		// An invalid request is invalid (400) whether or not the queue is known (404).
		if (!QUEUE_ACTIONS.contains(action)) {
			throw new InvalidEndpointRequestException("Unknown action '" + action + "' for a queue",
					"Unknown action '" + action + "': use pause, resume, redrive, remove or limits");
		}
		Function<QueueLimits, QueueLimits> change = "limits".equals(action)
				? limitsChange(rateLimit, globalConcurrency, keyRateLimit) : Function.identity();
		if (!this.isKnown.test(queue)) {
			return null;
		}
		return switch (action) {
			case "limits" -> {
				this.control.setLimits(queue, change.apply(this.control.limits(queue)));
				yield new ActionDescriptor(queue, null, action, 1);
			}
			case "remove" -> {
				QueueRemoval removal = this.control.remove(queue);
				if (!removal.removed()) {
					throw new InvalidEndpointRequestException(removal.message(), removal.message());
				}
				yield new ActionDescriptor(queue, null, action, 1);
			}
			case "pause" -> {
				this.control.pause(queue);
				yield new ActionDescriptor(queue, null, action, 1);
			}
			case "resume" -> {
				this.control.resume(queue);
				yield new ActionDescriptor(queue, null, action, 1);
			}
			default -> new ActionDescriptor(queue, null, action, this.deadLetters.redriveAll(queue));
		};
	}

	/**
	 * Act on a task: {@code redrive} (a dead letter), {@code cancel} (a scheduled or
	 * ready task; a running one is asked to stop, answered as the action {@code stop}) or
	 * {@code run} (a scheduled task, due now).
	 * @param queue the queue
	 * @param taskId the task's id
	 * @param action the action
	 * @return what was done, or {@code null} when the task cannot be acted on (unknown,
	 * or not in a fitting state)
	 */
	@Nullable ActionDescriptor taskAction(String queue, String taskId, String action) {
		TaskId id = checkTaskId(taskId);
		checkQueue(queue);
		boolean done = switch (action) {
			case "redrive" -> this.deadLetters.redrive(queue, id);
			case "cancel" -> this.scheduler.cancel(queue, id);
			// Only a scheduled task: rescheduling a ready one would only move it back in
			// line.
			case "run" ->
				stateOf(queue, id) == TaskState.SCHEDULED && this.scheduler.reschedule(queue, id, Duration.ZERO);
			default -> throw new InvalidEndpointRequestException("Unknown action '" + action + "' for a task",
					"Unknown action '" + action + "': use redrive, cancel or run");
		};
		if (!done && action.equals("cancel") && stateOf(queue, id) == TaskState.ACTIVE) {
			// cancel asked a running task to stop (it is interrupted, not retried, and
			// deleted when its run ends):
			// say so rather than "nothing done".
			return new ActionDescriptor(queue, taskId, "stop", 1);
		}
		return done ? new ActionDescriptor(queue, taskId, action, 1) : null;
	}

	private @Nullable TaskState stateOf(String queue, TaskId id) {
		return this.scheduler.find(queue, id).map(TaskInfo::state).orElse(null);
	}

	/**
	 * Delete every dead letter of a queue.
	 * @param queue the queue
	 * @return how many were deleted, or {@code null} when the queue is unknown
	 */
	@Nullable ActionDescriptor purge(String queue) {
		if (!this.isKnown.test(checkQueue(queue))) {
			return null;
		}
		return new ActionDescriptor(queue, null, "purge", this.deadLetters.purge(queue));
	}

	/**
	 * Remove a queue from the index of known queues (see {@link QueueControl#remove}),
	 * for the web extension, which answers a refusal with 409 and its reasons.
	 * @param queue the queue
	 * @return what was done, or {@code null} when the queue is unknown
	 */
	@Nullable QueueRemoval remove(String queue) {
		return this.isKnown.test(checkQueue(queue)) ? this.control.remove(queue) : null;
	}

	/**
	 * The change a {@code limits} request asks for, its values checked first: an invalid
	 * one is an invalid request that names it.
	 * @param rateLimit the rate limit, {@code none}, or {@code null} to keep it
	 * @param globalConcurrency the global concurrency, 0 for none, or {@code null} to
	 * keep it
	 * @param keyRateLimit the rate limit of each rate key, {@code none}, or {@code null}
	 * to keep it
	 * @return the limits after the change, from those before it
	 */
	private static Function<QueueLimits, QueueLimits> limitsChange(@Nullable String rateLimit,
			@Nullable Integer globalConcurrency, @Nullable String keyRateLimit) {
		if (rateLimit == null && globalConcurrency == null && keyRateLimit == null) {
			String reason = "Action 'limits' needs rateLimit (count/window, or none), globalConcurrency (0 for none)"
					+ " or keyRateLimit (count/window, or none)";
			throw new InvalidEndpointRequestException(reason, reason);
		}
		RateLimit rate = rateOrNone("rateLimit", rateLimit);
		RateLimit keyRate = rateOrNone("keyRateLimit", keyRateLimit);
		if (globalConcurrency != null && globalConcurrency < 0) {
			throw new InvalidEndpointRequestException("globalConcurrency " + globalConcurrency + " is negative",
					"globalConcurrency must be at least 1, or 0 for none, not " + globalConcurrency);
		}
		return (before) -> new QueueLimits((rateLimit != null) ? rate : before.rateLimit(),
				(globalConcurrency != null) ? concurrencyOrNone(globalConcurrency) : before.globalConcurrency(),
				(keyRateLimit != null) ? keyRate : before.keyRateLimit());
	}

	private static @Nullable RateLimit rateOrNone(String name, @Nullable String value) {
		try {
			return (value == null || "none".equals(value)) ? null : RateLimit.parse(value);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(name + " " + ex.getMessage(), name + " " + ex.getMessage());
		}
	}

	private static @Nullable Integer concurrencyOrNone(int globalConcurrency) {
		return (globalConcurrency > 0) ? globalConcurrency : null;
	}

	static String checkQueue(String queue) {
		try {
			return Names.checkQueue(queue);
		}
		catch (InvalidTaskRequestException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
	}

	static TaskId checkTaskId(String taskId) {
		try {
			return TaskId.of(taskId);
		}
		catch (InvalidTaskRequestException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
	}

}

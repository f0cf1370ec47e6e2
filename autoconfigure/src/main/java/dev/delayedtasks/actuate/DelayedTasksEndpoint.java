package dev.delayedtasks.actuate;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.QueueRemoval;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.internal.actuate.QueueSnapshots;
import dev.delayedtasks.internal.actuate.ReportedQueues;
import dev.delayedtasks.internal.admin.RedisDeadLetters;
import dev.delayedtasks.internal.store.DeadLetterListing;
import dev.delayedtasks.internal.store.QueueCounter;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.QueueStats;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code delayedtasks} Actuator endpoint: queues with their counts, handlers and
 * timer owner; one queue with its newest dead letters; one task. With
 * {@code management.endpoint.delayedtasks.access=unrestricted} also: redrive and purge
 * dead letters, cancel a task, pause and resume a queue, remove an empty queue from the
 * index. Never returns payloads. Reads come from Redis directly (they are operator
 * requests, not scrapes); the queue list reads at most
 * {@code delayed-tasks.monitoring.max-queues} queues (more only if this instance handles
 * more, see {@link ReportedQueues}) and counts the rest, so its size and its Redis calls
 * are bounded however many queue names the index holds. Unknown queues and tasks answer
 * {@code null} (404 over HTTP); invalid names answer 400.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Endpoint(id = "delayedtasks", defaultAccess = Access.READ_ONLY)
public class DelayedTasksEndpoint {

	private static final int DEAD_LETTERS_SHOWN = 20;

	private final RedisQueueStats stats;

	private final QueueIndex index;

	private final DelayedTaskScheduler scheduler;

	private final DeadLetters deadLetters;

	private final EndpointActions actions;

	private final @Nullable DelayedTaskHandlerRegistry registry;

	private final ReportedQueues reported;

	/**
	 * Create the endpoint that lists at most {@value QueueSnapshots#DEFAULT_MAX_QUEUES}
	 * queues, handled ones first.
	 * @param stats reads queue stats
	 * @param index the known queues
	 * @param scheduler finds and cancels tasks
	 * @param deadLetters the dead letters
	 * @param control pauses, resumes and removes queues
	 * @param registry this instance's handlers, or {@code null} on a producer-only
	 * instance
	 */
	public DelayedTasksEndpoint(RedisQueueStats stats, QueueIndex index, DelayedTaskScheduler scheduler,
			DeadLetters deadLetters, QueueControl control, @Nullable DelayedTaskHandlerRegistry registry) {
		this(stats, index, scheduler, deadLetters, control, registry, new ReportedQueues(
				QueueSnapshots.DEFAULT_MAX_QUEUES, Set.of(), ReportedQueues.handledBy(() -> registry)));
	}

	/**
	 * Create the endpoint.
	 * @param stats reads queue stats
	 * @param index the known queues
	 * @param scheduler finds and cancels tasks
	 * @param deadLetters the dead letters
	 * @param control pauses, resumes and removes queues
	 * @param registry this instance's handlers, or {@code null} on a producer-only
	 * instance
	 * @param reported chooses the queues the queue list shows
	 */
	public DelayedTasksEndpoint(RedisQueueStats stats, QueueIndex index, DelayedTaskScheduler scheduler,
			DeadLetters deadLetters, QueueControl control, @Nullable DelayedTaskHandlerRegistry registry,
			ReportedQueues reported) {
		this.stats = stats;
		this.index = index;
		this.scheduler = scheduler;
		this.deadLetters = deadLetters;
		this.registry = registry;
		this.reported = reported;
		this.actions = new EndpointActions(scheduler, deadLetters, control, this::isKnown);
	}

	/**
	 * The known queues: those handled here, then up to
	 * {@code delayed-tasks.monitoring.max-queues} others (declared ones first, then by
	 * name), with how many are left out.
	 * @return the queues
	 */
	@ReadOperation
	public QueuesDescriptor queues() {
		ReportedQueues.Selection selection = this.reported.select(this.index.queues());
		return new QueuesDescriptor(
				selection.queues().stream().map((queue) -> describe(this.stats.read(queue))).toList(),
				selection.known(), selection.omitted());
	}

	/**
	 * One queue with its newest dead letters.
	 * @param queue the queue
	 * @return the queue, or {@code null} when unknown
	 */
	@ReadOperation
	public @Nullable QueueDetailDescriptor queue(@Selector String queue) {
		if (!isKnown(EndpointActions.checkQueue(queue))) {
			return null;
		}
		DeadLetterListing listing = (this.deadLetters instanceof RedisDeadLetters redis)
				? redis.listing(queue, DEAD_LETTERS_SHOWN)
				: new DeadLetterListing(this.deadLetters.list(queue, DEAD_LETTERS_SHOWN), 0);
		List<DeadLetterDescriptor> letters = listing.letters().stream().map(DeadLetterDescriptor::of).toList();
		return new QueueDetailDescriptor(describe(this.stats.read(queue)), letters, listing.unreadable());
	}

	/**
	 * One queue without its dead letters, for callers that read those themselves.
	 * @param queue the queue
	 * @return the queue, or {@code null} when unknown
	 */
	public @Nullable QueueDescriptor queueSummary(String queue) {
		return isKnown(EndpointActions.checkQueue(queue)) ? describe(this.stats.read(queue)) : null;
	}

	/**
	 * Whether a queue is handled here or in the index.
	 * @param queue the queue
	 * @return whether it is known
	 */
	public boolean knows(String queue) {
		return isKnown(EndpointActions.checkQueue(queue));
	}

	/**
	 * One task, with its outcome when it has ended and its outcome is kept
	 * ({@code delayed-tasks.results.*}).
	 * @param queue the queue
	 * @param taskId the task's id
	 * @return the task, or {@code null} when it neither exists nor left an outcome
	 */
	@ReadOperation
	public @Nullable TaskDescriptor task(@Selector String queue, @Selector String taskId) {
		TaskId id = EndpointActions.checkTaskId(taskId);
		String checked = EndpointActions.checkQueue(queue);
		TaskInfo info = this.scheduler.find(checked, id).orElse(null);
		// Only a task that has ended has an outcome: of those, a dead letter keeps its
		// hash.
		if (info != null && info.state() != TaskState.DEAD) {
			return TaskDescriptor.of(info, null);
		}
		TaskOutcome outcome = this.scheduler.outcome(checked, id).orElse(null);
		if (info != null) {
			return TaskDescriptor.of(info, outcome);
		}
		return (outcome != null) ? TaskDescriptor.ended(outcome) : null;
	}

	/**
	 * Act on a queue: {@code pause}, {@code resume}, {@code redrive} (all its dead
	 * letters), {@code remove} (from the index of known queues, when it is empty and no
	 * handler runs for it; a refusal is an invalid request whose message says why) or
	 * {@code limits} (its flow control for every instance: a limit left out is unchanged,
	 * {@code none} or 0 removes one).
	 * @param queue the queue
	 * @param action the action
	 * @param rateLimit with {@code limits}: the rate limit, {@code count/window} or
	 * {@code none}
	 * @param globalConcurrency with {@code limits}: the global concurrency, 0 for none
	 * @param keyRateLimit with {@code limits}: the rate limit of each rate key,
	 * {@code count/window} or {@code none}
	 * @return what was done, or {@code null} when the queue is unknown
	 */
	@WriteOperation
	public @Nullable ActionDescriptor queueAction(@Selector String queue, String action, @Nullable String rateLimit,
			@Nullable Integer globalConcurrency, @Nullable String keyRateLimit) {
		return this.actions.queueAction(queue, action, rateLimit, globalConcurrency, keyRateLimit);
	}

	/**
	 * Act on a task: {@code redrive} (a dead letter), {@code cancel} (a scheduled or
	 * ready task; a running one is asked to stop, answered as the action {@code stop}) or
	 * {@code run} (a scheduled task: due now).
	 * @param queue the queue
	 * @param taskId the task's id
	 * @param action the action
	 * @return what was done, or {@code null} when the task cannot be acted on (unknown,
	 * or not in a fitting state)
	 */
	@WriteOperation
	public @Nullable ActionDescriptor taskAction(@Selector String queue, @Selector String taskId, String action) {
		return this.actions.taskAction(queue, taskId, action);
	}

	/**
	 * Delete every dead letter of a queue.
	 * @param queue the queue
	 * @return how many were deleted, or {@code null} when the queue is unknown
	 */
	@DeleteOperation
	public @Nullable ActionDescriptor purge(@Selector String queue) {
		return this.actions.purge(queue);
	}

	/**
	 * Remove a queue from the index of known queues (see {@link QueueControl#remove}),
	 * for the web extension, which answers a refusal with 409 and its reasons.
	 * @param queue the queue
	 * @return what was done, or {@code null} when the queue is unknown
	 */
	@Nullable QueueRemoval remove(String queue) {
		return this.actions.remove(queue);
	}

	private QueueDescriptor describe(QueueStats stats) {
		List<HandlerDescriptor> handlers = handlers().stream()
			.filter((handler) -> handler.queue().equals(stats.queue()))
			.map((handler) -> new HandlerDescriptor(handler.id(), handler.concurrency(), handler.activeTasks(),
					handler.isRunning(), handler.isTimerOwner()))
			.toList();
		return new QueueDescriptor(stats.queue(), stats.scheduled(), stats.ready(), stats.active(), stats.dead(),
				(stats.nextDueMs() >= 0) ? Instant.ofEpochMilli(stats.nextDueMs()) : null,
				stats.oldestReadyAge().toMillis(), stats.paused(), stats.timerOwner(), handlers,
				LimitsDescriptor.of(stats), QueueCounter.byDisplayName(stats));
	}

	private Collection<HandlerContainer> handlers() {
		return (this.registry != null) ? this.registry.getHandlers() : List.of();
	}

	private static Set<String> handledQueues(@Nullable DelayedTaskHandlerRegistry registry) {
		Set<String> queues = new TreeSet<>();
		if (registry != null) {
			registry.getHandlers().forEach((handler) -> queues.add(handler.queue()));
		}
		return queues;
	}

	/**
	 * Whether a queue is handled here or in the index: one {@code SISMEMBER}, not a read
	 * of the whole index.
	 * @param queue the queue
	 * @return whether it is known
	 */
	private boolean isKnown(String queue) {
		return handlers().stream().anyMatch((handler) -> handler.queue().equals(queue)) || this.index.contains(queue);
	}

	/**
	 * The known queues, or those of them that are reported.
	 *
	 * @param queues the queues reported: every queue handled here, then up to
	 * {@code delayed-tasks.monitoring.max-queues} others
	 * @param knownQueues the queues in the index or handled here
	 * @param unreportedQueues the known queues left out of {@code queues}
	 */
	public record QueuesDescriptor(List<QueueDescriptor> queues, int knownQueues,
			int unreportedQueues) implements OperationResponseBody {

	}

	/**
	 * One queue.
	 *
	 * @param name the queue
	 * @param scheduled tasks waiting for their due time
	 * @param ready tasks due and waiting for a worker
	 * @param active tasks running
	 * @param dead dead letters
	 * @param nextDueAt the earliest due time, or {@code null}
	 * @param oldestReadyAgeMillis how long the oldest ready task has waited
	 * @param paused whether the queue is paused
	 * @param timerOwner the instance owning the queue's timer, or {@code null}
	 * @param handlers this instance's handlers of the queue
	 * @param limits the queue's flow control and its use
	 * @param counters the queue's counters in Redis, every one by its spelled-out name
	 * ({@link QueueCounter#displayName()}), 0 when never counted
	 */
	public record QueueDescriptor(String name, long scheduled, long ready, long active, long dead,
			@Nullable Instant nextDueAt, long oldestReadyAgeMillis, boolean paused, @Nullable String timerOwner,
			List<HandlerDescriptor> handlers, LimitsDescriptor limits,
			Map<String, Long> counters) implements OperationResponseBody {

	}

	/**
	 * A queue's flow control (docs/flow-control.md) and how much of it is in use.
	 *
	 * @param rateLimit the rate limit as {@code count/window}, or {@code null} for none
	 * @param startsInRateWindow task starts within the rate limit's window now (0 without
	 * one)
	 * @param globalConcurrency the most tasks leased at once across all instances, or
	 * {@code null} for no limit
	 * @param leased tasks leased now, across all instances
	 * @param keyRateLimit the rate limit of each rate key as {@code count/window}, or
	 * {@code null} for none
	 * @param heldUntil until when a handler's {@code RateLimitedException} holds the
	 * queue (Redis time), or {@code null} when no hold is in force
	 */
	public record LimitsDescriptor(@Nullable String rateLimit, long startsInRateWindow,
			@Nullable Integer globalConcurrency, long leased, @Nullable String keyRateLimit,
			@Nullable Instant heldUntil) {

		static LimitsDescriptor of(QueueStats stats) {
			QueueLimits limits = stats.limits();
			return new LimitsDescriptor((limits.rateLimit() != null) ? limits.rateLimit().toString() : null,
					stats.startsInRateWindow(), limits.globalConcurrency(), stats.active(),
					(limits.keyRateLimit() != null) ? limits.keyRateLimit().toString() : null,
					(stats.heldUntilMs() > 0) ? Instant.ofEpochMilli(stats.heldUntilMs()) : null);
		}

	}

	/**
	 * One queue with its newest dead letters.
	 *
	 * @param queue the queue
	 * @param deadLetters its newest dead letters, newest first
	 * @param unreadableDeadLetters members of the queue's dead set that were passed over
	 * while collecting them because they are not task ids (bad data in Redis)
	 */
	public record QueueDetailDescriptor(QueueDescriptor queue, List<DeadLetterDescriptor> deadLetters,
			int unreadableDeadLetters) implements OperationResponseBody {

	}

	/**
	 * A handler on this instance.
	 *
	 * @param id the handler id
	 * @param concurrency its concurrency
	 * @param activeTasks tasks it runs now
	 * @param running whether it runs
	 * @param timerOwner whether this instance owns the queue's timer
	 */
	public record HandlerDescriptor(String id, int concurrency, int activeTasks, boolean running, boolean timerOwner) {

	}

	/**
	 * A dead letter, without its payload.
	 *
	 * @param id the task's id
	 * @param reason why it was dead-lettered
	 * @param exceptionType the exception's class name
	 * @param message the exception's message
	 * @param attempts failed runs
	 * @param deadAt when it was dead-lettered
	 * @param stackTrace the exception's bounded stack trace (types and frames, no
	 * messages), or {@code ""}
	 */
	public record DeadLetterDescriptor(String id, String reason, String exceptionType, String message, int attempts,
			Instant deadAt, String stackTrace) {

		static DeadLetterDescriptor of(DeadLetter letter) {
			return new DeadLetterDescriptor(letter.id().value(), letter.reason(), letter.exceptionType(),
					letter.message(), letter.attempts(), letter.deadAt(), letter.stackTrace());
		}

	}

	/**
	 * A task, without its payload.
	 *
	 * @param id the id
	 * @param queue the queue
	 * @param state the state, {@code ENDED} for a task that is gone but left an outcome
	 * @param failures failed runs, {@code null} for an ended task
	 * @param deliveries claims, {@code null} for an ended task
	 * @param maxAttempts runs allowed, {@code null} for an ended task
	 * @param dueAt the due time, {@code null} for an ended task
	 * @param createdAt the creation time, {@code null} for an ended task
	 * @param priority its priority among the queue's due tasks, {@code null} for an ended
	 * task
	 * @param lastError the last failure as {@code reason: type: message}, or {@code null}
	 * @param outcome how the task ended, when it has and its outcome is kept
	 */
	public record TaskDescriptor(String id, String queue, String state, @Nullable Integer failures,
			@Nullable Integer deliveries, @Nullable Integer maxAttempts, @Nullable Instant dueAt,
			@Nullable Instant createdAt, @Nullable Integer priority, @Nullable String lastError,
			@Nullable OutcomeDescriptor outcome) implements OperationResponseBody {

		static TaskDescriptor of(TaskInfo info, @Nullable TaskOutcome outcome) {
			String error = (info.lastError() != null) ? info.lastError().reason() + ": "
					+ info.lastError().exceptionType() + ": " + info.lastError().message() : null;
			return new TaskDescriptor(info.id().value(), info.queue(), info.state().name(), info.failures(),
					info.deliveries(), info.maxAttempts(), info.dueAt(), info.createdAt(), info.priority(), error,
					(outcome != null) ? OutcomeDescriptor.of(outcome) : null);
		}

		static TaskDescriptor ended(TaskOutcome outcome) {
			return new TaskDescriptor(outcome.id().value(), outcome.queue(), "ENDED", null, null, null, null, null,
					null, null, OutcomeDescriptor.of(outcome));
		}

	}

	/**
	 * How a task ended. The handler's return value is not shown, as payloads are not:
	 * only whether there is one.
	 *
	 * @param kind {@code SUCCEEDED}, {@code DEAD_LETTERED}, {@code CANCELLED} or
	 * {@code EXPIRED}
	 * @param runs how many times a handler ran it
	 * @param finishedAt when it ended
	 * @param reason the dead-letter or expiry reason, or {@code null}
	 * @param error the last failure as {@code type: message}, or {@code null}
	 * @param result whether the handler returned a value
	 */
	public record OutcomeDescriptor(String kind, int runs, Instant finishedAt, @Nullable String reason,
			@Nullable String error, boolean result) {

		static OutcomeDescriptor of(TaskOutcome outcome) {
			String error = outcome.exceptionType()
				.map((type) -> type + outcome.message().map((message) -> ": " + message).orElse(""))
				.orElse(null);
			return new OutcomeDescriptor(outcome.kind().name(), outcome.runs(), outcome.finishedAt(),
					outcome.reason().orElse(null), error, outcome.resultJson().isPresent());
		}

	}

	/**
	 * What a write operation did.
	 *
	 * @param queue the queue
	 * @param taskId the task, or {@code null} for queue actions
	 * @param action the action
	 * @param affected how many tasks it affected
	 */
	public record ActionDescriptor(String queue, @Nullable String taskId, String action,
			long affected) implements OperationResponseBody {

	}

}

package dev.delayedtasks.dashboard;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.actuate.DelayedTasksEndpoint;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.ActionDescriptor;
import dev.delayedtasks.internal.admin.RedisDeadLetters;
import dev.delayedtasks.internal.admin.RedisDeadLetters.DeadLetterPage;
import dev.delayedtasks.internal.worker.OccurrenceGate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * What the dashboard's users do, through the endpoint's operations and the dead letters,
 * each write logged on {@code dev.delayedtasks.dashboard.audit} with the user, the
 * action, the queue and the task ids: when it is done, and when it fails (a write that
 * timed out may still have reached Redis).
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public class DashboardActions {

	/**
	 * The most dead letters one step of a group action reads.
	 */
	static final int GROUP_STEP = 100;

	private static final Logger audit = LoggerFactory.getLogger("dev.delayedtasks.dashboard.audit");

	private final DelayedTasksEndpoint endpoint;

	private final RedisDeadLetters deadLetters;

	private final RecurringTasks recurring;

	private final DelayedTaskScheduler scheduler;

	private final DashboardReads reads;

	private final DashboardTasks tasks;

	/**
	 * Create the actions.
	 * @param endpoint the endpoint whose operations act on queues and tasks
	 * @param deadLetters the dead letters
	 * @param recurring the recurring schedules
	 * @param scheduler moves a task to a new due time
	 * @param reads the reads whose kept overview an action makes stale
	 * @param tasks reads a task's headers
	 */
	public DashboardActions(DelayedTasksEndpoint endpoint, RedisDeadLetters deadLetters, RecurringTasks recurring,
			DelayedTaskScheduler scheduler, DashboardReads reads, DashboardTasks tasks) {
		this.endpoint = endpoint;
		this.deadLetters = deadLetters;
		this.recurring = recurring;
		this.scheduler = scheduler;
		this.reads = reads;
		this.tasks = tasks;
	}

	/**
	 * Move a scheduled or ready task to a new due time, as
	 * {@link DelayedTaskScheduler#reschedule(String, TaskId, Instant)} does.
	 * @param user who asks
	 * @param queue the queue
	 * @param taskId the task's id
	 * @param runAt the new due time
	 * @return what was done, or {@code null} when the task is not scheduled or ready
	 * @throws RefusedActionException when the task is an occurrence of a recurring
	 * schedule: its time is its tick (the schedule's gate judges it by the tick in its
	 * id, and skips it as missed once that is past the misfire threshold)
	 */
	public @Nullable ActionDescriptor reschedule(String user, String queue, String taskId, Instant runAt) {
		TaskId id = TaskId.of(taskId);
		String schedule = this.tasks.headers(queue, taskId).get(OccurrenceGate.HEADER);
		if (schedule != null) {
			throw new RefusedActionException("Task '" + taskId + "' is an occurrence of recurring schedule '" + schedule
					+ "': its time is its tick. Trigger the schedule, or change its expression, instead");
		}
		return audited(
				user, "reschedule", queue, taskId, () -> this.scheduler.reschedule(queue, id, runAt)
						? new ActionDescriptor(queue, taskId, "reschedule", 1) : null,
				ActionDescriptor::affected, (result) -> taskId + " to " + runAt);
	}

	/**
	 * Pause, resume or trigger a recurring schedule ({@code trigger} runs it once now,
	 * outside its ticks, as {@link RecurringTasks#trigger(String)} does).
	 * @param user who asks
	 * @param id the schedule id
	 * @param action {@code pause}, {@code resume} or {@code trigger}
	 * @return what was done (for a trigger, the occurrence's task id), or {@code null}
	 * when there is no such schedule
	 * @throws RefusedActionException when a paused schedule is triggered
	 */
	public @Nullable ScheduleActionDescriptor scheduleAction(String user, String id, String action) {
		RecurringSchedule.checkId(id);
		if (!List.of("pause", "resume", "trigger").contains(action)) {
			throw new IllegalArgumentException(
					"Unknown action '" + action + "' for a schedule: use pause, resume or trigger");
		}
		// The audit names the schedule's queue, read first; an unknown schedule has none.
		String queue = this.recurring.find(id).map(RecurringScheduleInfo::queue).orElse("-");
		return audited(user, action + "-schedule", queue, id, () -> {
			String occurrence = null;
			boolean found = switch (action) {
				case "pause" -> this.recurring.pause(id);
				case "resume" -> this.recurring.resume(id);
				default -> {
					occurrence = trigger(id);
					yield occurrence != null;
				}
			};
			return found ? new ScheduleActionDescriptor(id, action, occurrence) : null;
		}, (done) -> 1, (done) -> (done.task() != null) ? done.task() : id);
	}

	private @Nullable String trigger(String id) {
		try {
			return this.recurring.trigger(id).map(TaskId::value).orElse(null);
		}
		catch (IllegalStateException ex) {
			throw new RefusedActionException(ex.getMessage());
		}
	}

	/**
	 * Pause or resume a queue.
	 * @param user who asks
	 * @param queue the queue
	 * @param action {@code pause} or {@code resume}
	 * @return what was done, or {@code null} when the queue is unknown
	 */
	public @Nullable ActionDescriptor queueAction(String user, String queue, String action) {
		return audited(user, action, queue, "-", () -> this.endpoint.queueAction(queue, action, null, null, null),
				ActionDescriptor::affected, (result) -> "-");
	}

	/**
	 * Act on one task: {@code cancel}, {@code run}, {@code redrive} (as the endpoint
	 * does) or {@code delete} (a dead letter).
	 * @param user who asks
	 * @param queue the queue
	 * @param taskId the task's id
	 * @param action the action
	 * @return what was done, or {@code null} when the task cannot be acted on
	 */
	public @Nullable ActionDescriptor taskAction(String user, String queue, String taskId, String action) {
		return audited(user, action, queue, taskId, () -> {
			if (!action.equals("delete")) {
				return this.endpoint.taskAction(queue, taskId, action);
			}
			return this.deadLetters.delete(queue, TaskId.of(taskId)) ? new ActionDescriptor(queue, taskId, action, 1)
					: null;
		}, ActionDescriptor::affected, (result) -> taskId);
	}

	/**
	 * Redrive one dead letter with a new payload.
	 * @param user who asks
	 * @param queue the queue
	 * @param taskId the task's id
	 * @param deadAt when it was dead-lettered, as the editor read it
	 * @param payload the new payload
	 * @return what was done, or {@code null} when it is not a dead letter, or not the one
	 * the editor read
	 */
	public @Nullable ActionDescriptor redriveWithPayload(String user, String queue, String taskId, Instant deadAt,
			JsonNode payload) {
		return audited(user, "redrive-edited", queue, taskId,
				() -> this.deadLetters.redrive(queue, TaskId.of(taskId), deadAt, payload)
						? new ActionDescriptor(queue, taskId, "redrive-edited", 1) : null,
				ActionDescriptor::affected, (result) -> taskId);
	}

	/**
	 * One bounded step of redriving or deleting the dead letters of one reason and
	 * exception type: reads at most {@value #GROUP_STEP} dead letters dead-lettered at or
	 * before {@code from} (newest first, passing over the first {@code skip} of that
	 * time) and acts on those of the group. The page calls it again from
	 * {@link GroupStep#from()} and {@link GroupStep#skip()} until
	 * {@link GroupStep#done()}. Walking by dead-letter time, not by rank, the steps pass
	 * over nothing that others remove meanwhile, and never meet a dead letter newer than
	 * their start: a redriven task that dies again (its handler still refuses it) is left
	 * alone, so they end.
	 * @param user who asks
	 * @param queue the queue
	 * @param action {@code redrive} or {@code delete}
	 * @param reason the group's reason
	 * @param exceptionType the group's exception type
	 * @param from the newest dead-letter time to read (epoch milliseconds), or
	 * {@code null} in the first step
	 * @param skip how many dead letters of that time to pass over
	 * @return what the step did
	 */
	public GroupStep groupStep(String user, String queue, String action, String reason, String exceptionType,
			@Nullable Long from, long skip) {
		if (skip < 0) {
			throw new IllegalArgumentException("A group step passes over 0 or more dead letters: " + skip);
		}
		List<String> acted = new ArrayList<>();
		return audited(user, action + "-group", queue, "(group " + reason + " / " + exceptionType + ")", () -> {
			// The first step starts at the newest dead letter; the others at the last one
			// read before.
			double start = (from != null) ? from : Double.POSITIVE_INFINITY;
			DeadLetterPage page = this.deadLetters.page(queue, start, (from != null) ? skip : 0, GROUP_STEP);
			int actedAtLast = 0;
			for (DeadLetter letter : page.letters()) {
				if (letter.reason().equals(reason) && letter.exceptionType().equals(exceptionType)) {
					boolean done = action.equals("redrive") ? this.deadLetters.redrive(queue, letter.id())
							: this.deadLetters.delete(queue, letter.id());
					if (done) {
						acted.add(letter.id().value());
						if (letter.deadAt().toEpochMilli() == page.lastDeadAt()) {
							actedAtLast++;
						}
					}
				}
			}
			// Those acted on left the dead set; those left at the last time read are
			// passed over next time.
			long left = page.readAtLast() - actedAtLast;
			long nextSkip = (from != null && page.lastDeadAt() == from) ? skip + left : left;
			return new GroupStep(page.read(), acted.size(), page.lastDeadAt(), nextSkip, this.deadLetters.count(queue),
					page.read() == 0, acted);
		}, GroupStep::acted, (step) -> step.ids().isEmpty() ? "-" : String.join(",", step.ids()));
	}

	// Tried names the tasks asked for; done names those acted on, once known.
	private <T> T audited(String user, String action, String queue, String tried, Supplier<T> call,
			Function<T, Number> affected, Function<T, String> done) {
		T result;
		try {
			result = call.get();
		}
		catch (RuntimeException | Error ex) {
			// It may have reached Redis before it failed: the audit says it was tried.
			audit.warn("user={} action={} queue={} task={} affected=unknown error={}", user, action, queue, tried,
					ex.getClass().getName());
			throw ex;
		}
		this.reads.forgetOverview();
		audit.info("user={} action={} queue={} task={} affected={}", user, action, queue,
				(result != null) ? done.apply(result) : tried, (result != null) ? affected.apply(result) : 0);
		return result;
	}

	/**
	 * An action the state of what it acts on refuses, such as a trigger of a paused
	 * schedule.
	 */
	static final class RefusedActionException extends RuntimeException {

		RefusedActionException(@Nullable String message) {
			super(message);
		}

	}

	/**
	 * What an action on a schedule did.
	 *
	 * @param schedule the schedule id
	 * @param action the action
	 * @param task the occurrence a trigger created, or {@code null}
	 */
	public record ScheduleActionDescriptor(String schedule, String action, @Nullable String task) {

	}

	/**
	 * What one step of a group action did.
	 *
	 * @param scanned dead letters read
	 * @param acted dead letters of the group redriven or deleted
	 * @param from the dead-letter time (epoch milliseconds) the next step starts at, -1
	 * when done
	 * @param skip how many dead letters of that time the next step passes over
	 * @param remaining dead letters the queue holds now
	 * @param done whether the whole dead set has been read
	 * @param ids the tasks acted on
	 */
	public record GroupStep(int scanned, int acted, long from, long skip, long remaining, boolean done,
			List<String> ids) {

	}

}

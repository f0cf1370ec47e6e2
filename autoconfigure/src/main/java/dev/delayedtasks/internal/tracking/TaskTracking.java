package dev.delayedtasks.internal.tracking;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import dev.delayedtasks.Names;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.internal.store.PreparedTask;
import org.jspecify.annotations.Nullable;

/**
 * Tracking on the producer's side: names this process's {@link OutcomeTracker} on the
 * tasks it schedules or waits for, reads kept outcomes ({@link OutcomeRecords}), and
 * decides how long a tracked task's outcome is kept (the queue's results retention, at
 * least the tracker's longest wait).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class TaskTracking {

	private final @Nullable OutcomeTracker tracker;

	private final OutcomeRecords outcomes;

	private final Function<String, Duration> resultsRetention;

	/**
	 * The callers of tracked requests held for a transaction's commit, by queue and id:
	 * armed when the task is created at the commit, failed when it will not be.
	 */
	private final Map<String, List<CompletableFuture<TaskOutcome>>> heldForCommit = new ConcurrentHashMap<>();

	/**
	 * Create the producer's side of tracking.
	 * @param tracker the tracker, or {@code null} when tracking is not offered
	 * @param outcomes reads and requests outcome records
	 * @param resultsRetention how long the outcome of a queue's tasks is kept, zero for
	 * not at all
	 */
	public TaskTracking(@Nullable OutcomeTracker tracker, OutcomeRecords outcomes,
			Function<String, Duration> resultsRetention) {
		this.tracker = tracker;
		this.outcomes = outcomes;
		this.resultsRetention = resultsRetention;
	}

	/**
	 * Track a new task: name the tracker on it, send it, and follow the task that holds
	 * its id or unique key when it is not created.
	 * @param prepared the validated task
	 * @param send stores the task (or holds it for a commit)
	 * @return the tracked task
	 */
	public TrackedTask track(PreparedTask prepared, Function<PreparedTask, ScheduleResult> send) {
		OutcomeTracker tracker = tracker();
		Duration keep = retention(prepared.queue(), tracker);
		PreparedTask task = prepared.withOutcome(keep, tracker.channel());
		String queue = task.queue();
		// Registered before the send, so no message of the task can pass unheard; heard
		// only once the task exists, so no record of an earlier task with its id counts.
		CompletableFuture<TaskOutcome> outcome = tracker.expectNew(queue, task.id());
		ScheduleResult result;
		try {
			result = send.apply(task);
		}
		catch (RuntimeException ex) {
			outcome.completeExceptionally(ex);
			throw ex;
		}
		if (result.outcome() == ScheduleResult.Outcome.PENDING) {
			hold(queue, task.id(), outcome);
			return new TrackedTask(queue, result, outcome);
		}
		if (result.outcome() == ScheduleResult.Outcome.CREATED) {
			tracker.arm(queue, task.id(), outcome);
			return new TrackedTask(queue, result, outcome);
		}
		// An existing task (the enqueue named this tracker if it is live), or the
		// holder of the unique key: tracked the same way as awaitOutcome tracks one.
		if (!result.id().equals(task.id())) {
			outcome.completeExceptionally(new IllegalStateException("a duplicate of " + result.id()));
			outcome = tracker.expect(queue, result.id());
		}
		else {
			tracker.arm(queue, task.id(), outcome);
		}
		trackExisting(queue, result.id(), keep, tracker, outcome);
		return new TrackedTask(queue, result, outcome);
	}

	/**
	 * A tracked task held for a commit was sent: its callers hear the task created, or
	 * the task Redis answered with instead (its id exists, or its unique key is held).
	 * @param task the task as sent
	 * @param result what Redis answered
	 */
	public void sent(PreparedTask task, ScheduleResult result) {
		OutcomeTracker tracker = this.tracker;
		String queue = task.queue();
		List<CompletableFuture<TaskOutcome>> callers = takeHeld(queue, task.id());
		if (tracker == null || callers.isEmpty()) {
			return;
		}
		try {
			if (result.outcome() == ScheduleResult.Outcome.CREATED) {
				callers.forEach((caller) -> tracker.arm(queue, task.id(), caller));
				return;
			}
			Duration keep = retention(queue, tracker);
			if (result.id().equals(task.id())) {
				callers.forEach((caller) -> tracker.arm(queue, task.id(), caller));
				CompletableFuture<TaskOutcome> probe = new CompletableFuture<>();
				failWith(probe, callers);
				trackExisting(queue, task.id(), keep, tracker, probe);
			}
			else {
				CompletableFuture<TaskOutcome> holder = tracker.expect(queue, result.id());
				holder.whenComplete((outcome, ex) -> callers.forEach((caller) -> {
					if (ex != null) {
						caller.completeExceptionally(ex);
					}
					else {
						caller.complete(outcome);
					}
				}));
				trackExisting(queue, result.id(), keep, tracker, holder);
			}
		}
		catch (RuntimeException ex) {
			// After the commit, on the committing thread: the callers' futures say it.
			callers.forEach((caller) -> caller.completeExceptionally(ex));
		}
	}

	/**
	 * Fail the tracking of a task held for a commit that will never be stored: only the
	 * callers who tracked that held request, not others awaiting the id.
	 * @param queue the queue
	 * @param id the task
	 * @param reason why
	 */
	public void forget(String queue, TaskId id, Throwable reason) {
		for (CompletableFuture<TaskOutcome> caller : takeHeld(queue, id)) {
			caller.completeExceptionally(reason);
		}
	}

	private void hold(String queue, TaskId id, CompletableFuture<TaskOutcome> caller) {
		String key = heldKey(queue, id);
		this.heldForCommit.computeIfAbsent(key, (k) -> new CopyOnWriteArrayList<>()).add(caller);
		// A caller that stops waiting (cancel, timeout) leaves.
		caller.whenComplete((outcome, ex) -> this.heldForCommit.computeIfPresent(key, (k, callers) -> {
			callers.remove(caller);
			return callers.isEmpty() ? null : callers;
		}));
	}

	private List<CompletableFuture<TaskOutcome>> takeHeld(String queue, TaskId id) {
		List<CompletableFuture<TaskOutcome>> callers = this.heldForCommit.remove(heldKey(queue, id));
		return (callers != null) ? List.copyOf(callers) : List.of();
	}

	private static String heldKey(String queue, TaskId id) {
		return queue + '\0' + id.value();
	}

	private static void failWith(CompletableFuture<TaskOutcome> probe, List<CompletableFuture<TaskOutcome>> callers) {
		probe.whenComplete((outcome, ex) -> {
			if (ex != null) {
				callers.forEach((caller) -> caller.completeExceptionally(ex));
			}
		});
	}

	/**
	 * How long the outcome of a queue's tasks is kept when nobody tracks them.
	 * @param queue the queue
	 * @return the retention, zero for not at all
	 */
	public Duration retention(String queue) {
		return this.resultsRetention.apply(queue);
	}

	/**
	 * The outcome record of a task, if it ended and its outcome is kept.
	 * @param queue the queue
	 * @param id the task
	 * @return its outcome, empty when it has not ended or its outcome is not kept
	 */
	public Optional<TaskOutcome> outcome(String queue, TaskId id) {
		return this.outcomes.read(Names.checkQueue(queue), id);
	}

	/**
	 * Wait for a task that exists already to end.
	 * @param queue the queue
	 * @param id the task
	 * @param timeout how long to wait
	 * @return its outcome, empty when it does not exist or ended without keeping it
	 */
	public Optional<TaskOutcome> awaitOutcome(String queue, TaskId id, Duration timeout) {
		OutcomeTracker tracker = tracker();
		String checked = Names.checkQueue(queue);
		// A second beyond the caller's timeout: the wait ends at the timeout (empty),
		// never
		// by the tracker's expiry racing it; the waiter leaves right after.
		CompletableFuture<TaskOutcome> outcome = tracker.expect(checked, id, timeout.plusSeconds(1));
		Duration keep = retention(checked, tracker);
		if (!trackExisting(checked, id, (timeout.compareTo(keep) > 0) ? timeout : keep, tracker, outcome)) {
			return Optional.empty();
		}
		Optional<TaskOutcome> ended = new TrackedTask(checked,
				new ScheduleResult(id, ScheduleResult.Outcome.EXISTING, null), outcome)
			.await(timeout);
		// This call's wait is over: it no longer holds a place among the task's waiters.
		outcome.cancel(false);
		return ended;
	}

	/**
	 * Name this tracker on a task that exists already, or read how it ended.
	 * @param queue the queue
	 * @param id the task
	 * @param keep how long its outcome is kept at least
	 * @param tracker the tracker
	 * @param waiter the caller's future, failed when no outcome is to be had (and no
	 * other caller's)
	 * @return whether an outcome is to be had: the task is live, or its record is there
	 */
	private boolean trackExisting(String queue, TaskId id, Duration keep, OutcomeTracker tracker,
			CompletableFuture<TaskOutcome> waiter) {
		char state;
		try {
			state = this.outcomes.track(queue, id, keep, tracker.channel());
		}
		catch (RuntimeException ex) {
			waiter.completeExceptionally(ex);
			throw ex;
		}
		if (state == 'O') {
			tracker.check(queue, id);
		}
		else if (state == 'N') {
			waiter.completeExceptionally(new TaskStoreException(
					"Task " + id + " of queue '" + queue + "' does not exist, or ended without keeping its outcome", id,
					null));
			return false;
		}
		return true;
	}

	private Duration retention(String queue, OutcomeTracker tracker) {
		Duration retention = this.resultsRetention.apply(queue);
		return (retention.compareTo(tracker.maxWait()) > 0) ? retention : tracker.maxWait();
	}

	/**
	 * The tracker, which tracking needs.
	 * @return the tracker
	 * @throws IllegalStateException when the scheduler was built without one
	 */
	public OutcomeTracker tracker() {
		OutcomeTracker tracker = this.tracker;
		if (tracker == null) {
			throw new IllegalStateException(
					"Tracking needs the outcome tracker, which this scheduler was built without");
		}
		return tracker;
	}

}

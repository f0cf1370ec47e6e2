package dev.delayedtasks.internal.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.testing.TaskRun;
import dev.delayedtasks.testing.TaskRun.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * Internal: records every run of this application context's handlers, and the queues it
 * scheduled into, as a {@link DelayedTaskListener}. The listeners hear an outcome only
 * after it is written to Redis, so a run recorded as ended is ended in Redis too.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RunHistory implements DelayedTaskListener {

	private final Object lock = new Object();

	private final List<TaskRun> runs = new ArrayList<>();

	/** Runs still {@link Outcome#RUNNING}, by their context (one object per run). */
	private final Map<TaskContext, Integer> open = new IdentityHashMap<>();

	private final Set<String> queues = new TreeSet<>();

	@Override
	public void scheduled(String queue, ScheduleResult result) {
		synchronized (this.lock) {
			this.queues.add(queue);
		}
	}

	@Override
	public void started(TaskContext context) {
		synchronized (this.lock) {
			this.queues.add(context.queue());
			this.open.put(context, this.runs.size());
			this.runs.add(new TaskRun(context, Outcome.RUNNING, null, null, null));
		}
	}

	@Override
	public void succeeded(TaskContext context, Duration runTime) {
		end(context, Outcome.SUCCEEDED, null, null, null);
	}

	@Override
	public void retried(TaskContext context, Throwable failure, Instant nextRunAt) {
		end(context, Outcome.RETRIED, failure, null, nextRunAt);
	}

	@Override
	public void deadLettered(TaskContext context, Throwable failure, String reason) {
		end(context, Outcome.DEAD_LETTERED, failure, reason, null);
	}

	@Override
	public void staleAcknowledgement(TaskContext context) {
		end(context, Outcome.STALE, null, null, null);
	}

	private void end(TaskContext context, Outcome outcome, @Nullable Throwable failure, @Nullable String reason,
			@Nullable Instant next) {
		synchronized (this.lock) {
			Integer index = this.open.remove(context);
			TaskRun run = new TaskRun(context, outcome, failure, reason, next);
			if (index != null) {
				this.runs.set(index, run);
			}
			else {
				// Started before the last clear(): the test that cleared does not see it.
				this.queues.add(context.queue());
			}
		}
	}

	/**
	 * The runs recorded since the last {@link #clear()}, in the order they started.
	 * @return a copy of the runs
	 */
	public List<TaskRun> runs() {
		synchronized (this.lock) {
			return List.copyOf(this.runs);
		}
	}

	/**
	 * Whether a run of the queue has started and not ended yet.
	 * @param queue the queue
	 * @return whether one is running
	 */
	public boolean isRunning(String queue) {
		synchronized (this.lock) {
			return this.open.keySet().stream().anyMatch((context) -> context.queue().equals(queue));
		}
	}

	/**
	 * Mark the queue's open runs as ended without a recorded outcome: Redis no longer has
	 * them in flight, so no listener will hear of them.
	 * @param queue the queue
	 */
	public void endUnrecorded(String queue) {
		synchronized (this.lock) {
			this.open.entrySet().removeIf((entry) -> {
				if (!entry.getKey().queue().equals(queue)) {
					return false;
				}
				this.runs.set(entry.getValue(),
						new TaskRun(entry.getKey(), Outcome.ENDED_UNRECORDED, null, null, null));
				return true;
			});
		}
	}

	/**
	 * The queues this context scheduled into or ran tasks of.
	 * @return a copy of their names
	 */
	public Set<String> queues() {
		synchronized (this.lock) {
			return Set.copyOf(this.queues);
		}
	}

	/**
	 * Forget every run; the queues stay known.
	 */
	public void clear() {
		synchronized (this.lock) {
			this.runs.clear();
			this.open.clear();
		}
	}

}

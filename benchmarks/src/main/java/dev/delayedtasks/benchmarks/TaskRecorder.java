package dev.delayedtasks.benchmarks;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.TaskContext;

import org.springframework.stereotype.Component;

/**
 * Records every handler run of every workload the same way: id, attempt, due and start
 * time from the {@link TaskContext} (Redis time), the local time the handler was entered,
 * and the outcome. Runs go to the {@link Recording} open for their queue; runs of a queue
 * without one are dropped.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
final class TaskRecorder {

	private final Map<String, Recording> open = new ConcurrentHashMap<>();

	/**
	 * Open a recording for a queue, replacing any open one.
	 * @param queue the queue
	 * @return the recording
	 */
	Recording start(String queue) {
		Recording recording = new Recording(queue);
		this.open.put(queue, recording);
		return recording;
	}

	/**
	 * Close a recording: later runs of its queue are dropped.
	 * @param recording the recording
	 */
	void stop(Recording recording) {
		this.open.remove(recording.queue(), recording);
	}

	/**
	 * Record a run; called first thing by the handlers.
	 * @param context the run's context
	 * @param outcome how the handler will end the run
	 */
	void record(TaskContext context, TaskRun.Outcome outcome) {
		long localMicros = Recording.nowMicros();
		Recording recording = this.open.get(context.queue());
		if (recording != null) {
			recording.record(new TaskRun(context.id().value(), context.attempt(), context.dueAt().toEpochMilli(),
					context.startedAt().toEpochMilli(), localMicros, outcome));
		}
	}

}

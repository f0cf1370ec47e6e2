package dev.delayedtasks.benchmarks;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.TaskId;

/**
 * What the soak's coordinator did to every task: scheduled it (or tried to), and
 * cancelled it (or tried to). Filled by the producer's threads, read by the
 * {@link SoakVerdict}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class SoakPlan {

	private final Map<String, PlannedTask> tasks = new ConcurrentHashMap<>();

	void scheduled(TaskId id, SoakTask.Kind kind) {
		this.tasks.put(id.value(), new PlannedTask(id.value(), kind, true, Cancel.NONE));
	}

	/**
	 * A schedule call that failed: the task may have been stored anyway (the command can
	 * reach Redis after the client gave up on it).
	 * @param id the task's id, chosen before the call
	 * @param kind its kind
	 */
	void scheduleFailed(TaskId id, SoakTask.Kind kind) {
		this.tasks.put(id.value(), new PlannedTask(id.value(), kind, false, Cancel.NONE));
	}

	void cancelled(TaskId id, Cancel cancel) {
		this.tasks.computeIfPresent(id.value(), (key, task) -> task.withCancel(cancel));
	}

	int size() {
		return this.tasks.size();
	}

	List<PlannedTask> tasks() {
		return List.copyOf(this.tasks.values());
	}

	/**
	 * What became of a cancel.
	 */
	enum Cancel {

		/** Not cancelled. */
		NONE,

		/** {@code cancel} returned {@code true}: the task must never run. */
		CANCELLED,

		/** {@code cancel} returned {@code false}: the task was no longer scheduled. */
		REFUSED,

		/** {@code cancel} threw: it may or may not have been applied. */
		FAILED

	}

	/**
	 * One task as the coordinator knows it.
	 *
	 * @param id the id
	 * @param kind its kind
	 * @param stored whether {@code schedule} returned (else it threw)
	 * @param cancel what became of a cancel
	 */
	record PlannedTask(String id, SoakTask.Kind kind, boolean stored, Cancel cancel) {

		PlannedTask withCancel(Cancel cancel) {
			return new PlannedTask(this.id, this.kind, this.stored, cancel);
		}

	}

}

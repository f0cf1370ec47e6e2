package dev.delayedtasks.benchmarks;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import dev.delayedtasks.benchmarks.SoakPlan.Cancel;
import dev.delayedtasks.benchmarks.SoakPlan.PlannedTask;

/**
 * The soak's check: the terminal state every task reached, from what the coordinator did
 * ({@link SoakPlan}), what the handlers recorded ({@link SoakLedger}), the dead letters,
 * and what is still queued. A task must end in exactly one terminal state, the one its
 * kind asks for; duplicate runs are counted, not held against it (delivery is at least
 * once).
 *
 * @param outcomes tasks per outcome
 * @param runs handler runs in all
 * @param duplicateSuccesses successful runs beyond the first of a task
 * @param interruptedRuns runs that never reached their end (killed, or cut off by the
 * outage)
 * @param earlyRuns runs that started before their task was due
 * @param examples a few of the tasks that broke a rule, described
 * @author delayed-tasks
 * @since 0.1.0
 */
record SoakVerdict(Map<Outcome, Integer> outcomes, long runs, long duplicateSuccesses, long interruptedRuns,
		long earlyRuns, List<String> examples) {

	private static final int MAX_EXAMPLES = 10;

	/**
	 * Judge every task.
	 * @param tasks what the coordinator did
	 * @param ledger what the handlers recorded
	 * @param dead the ids of the queue's dead letters
	 * @param pending the ids of tasks still scheduled, ready or running
	 * @return the verdict
	 */
	static SoakVerdict judge(Collection<PlannedTask> tasks, SoakLedger.Snapshot ledger, Set<String> dead,
			Set<String> pending) {
		Map<Outcome, Integer> outcomes = new EnumMap<>(Outcome.class);
		List<String> examples = new ArrayList<>();
		long duplicateSuccesses = 0;
		long interruptedRuns = 0;
		for (PlannedTask task : tasks) {
			String id = task.id();
			Outcome outcome = outcome(task, ledger, dead.contains(id), pending.contains(id));
			outcomes.merge(outcome, 1, Integer::sum);
			if (outcome.violation && examples.size() < MAX_EXAMPLES) {
				examples.add(outcome.field + ": " + task + " runs=" + ledger.runs(id) + " succeeded="
						+ ledger.succeeded(id) + " failed=" + ledger.failed(id) + " dead=" + dead.contains(id)
						+ " pending=" + pending.contains(id));
			}
			duplicateSuccesses += Math.max(0, ledger.succeeded(id) - 1);
			interruptedRuns += Math.max(0, ledger.runs(id) - ledger.succeeded(id) - ledger.failed(id));
		}
		long runs = ledger.runs().values().stream().mapToLong(Long::longValue).sum();
		long early = ledger.early().values().stream().mapToLong(Long::longValue).sum();
		return new SoakVerdict(outcomes, runs, duplicateSuccesses, interruptedRuns, early, List.copyOf(examples));
	}

	private static Outcome outcome(PlannedTask task, SoakLedger.Snapshot ledger, boolean dead, boolean pending) {
		long runs = ledger.runs(task.id());
		boolean succeeded = ledger.succeeded(task.id()) > 0;
		if (pending) {
			return Outcome.UNFINISHED;
		}
		if (task.cancel() == Cancel.CANCELLED) {
			return (runs > 0 || dead) ? Outcome.RAN_AFTER_CANCEL : Outcome.CANCELLED;
		}
		if (succeeded && dead) {
			return Outcome.SUCCEEDED_AND_DEAD;
		}
		Outcome expected = (task.kind() == SoakTask.Kind.ALWAYS_FAIL) ? Outcome.DEAD_LETTERED : Outcome.SUCCEEDED;
		if (succeeded || dead) {
			Outcome reached = succeeded ? Outcome.SUCCEEDED : Outcome.DEAD_LETTERED;
			return (reached == expected) ? reached : Outcome.UNEXPECTED;
		}
		// No terminal state seen: only allowed where the coordinator cannot know what
		// its own call did.
		if (!task.stored() && runs == 0) {
			return Outcome.NEVER_STORED;
		}
		if (task.cancel() == Cancel.FAILED && runs == 0) {
			// The cancel reached Redis after the client had given up on it.
			return Outcome.CANCELLED;
		}
		if (task.cancel() == Cancel.REFUSED || task.cancel() == Cancel.FAILED) {
			// A cancel that finds the task running asks it to stop: a run that then ends
			// without success (or is killed) deletes the task instead of retrying it.
			return Outcome.CANCELLED_WHILE_RUNNING;
		}
		return Outcome.LOST;
	}

	int count(Outcome outcome) {
		return this.outcomes.getOrDefault(outcome, 0);
	}

	/**
	 * Broken rules: tasks in a wrong, double or no terminal state, and early runs.
	 * @return the count
	 */
	long violations() {
		long tasks = this.outcomes.entrySet()
			.stream()
			.filter((entry) -> entry.getKey().violation)
			.mapToLong(Map.Entry::getValue)
			.sum();
		return tasks + this.earlyRuns;
	}

	/**
	 * The verdict's fields, for the result line: every outcome, the duplicates, then
	 * {@code early}, {@code lost} and {@code violations}.
	 * @return the fields, in order
	 */
	Map<String, Object> fields() {
		Map<String, Object> fields = new LinkedHashMap<>();
		fields.put("tasks", this.outcomes.values().stream().mapToInt(Integer::intValue).sum());
		for (Outcome outcome : Outcome.values()) {
			if (outcome != Outcome.LOST) {
				fields.put(outcome.field, count(outcome));
			}
		}
		fields.put("runs", this.runs);
		fields.put("duplicate_successes", this.duplicateSuccesses);
		fields.put("interrupted_runs", this.interruptedRuns);
		fields.put("early", this.earlyRuns);
		fields.put("lost", count(Outcome.LOST));
		fields.put("violations", violations());
		return fields;
	}

	/**
	 * Where a task ended.
	 */
	enum Outcome {

		/** Succeeded (at least once), as planned. */
		SUCCEEDED(false),

		/** Dead-lettered and never succeeded, as planned. */
		DEAD_LETTERED(false),

		/** Cancelled and never ran. */
		CANCELLED(false),

		/** A cancel found it running; the run ended without success and took it away. */
		CANCELLED_WHILE_RUNNING(false),

		/** Its {@code schedule} call failed, and no trace of it exists. */
		NEVER_STORED(false),

		/** Ran although {@code cancel} returned {@code true}: two terminal states. */
		RAN_AFTER_CANCEL(true),

		/** Succeeded and dead-lettered: two terminal states. */
		SUCCEEDED_AND_DEAD(true),

		/** A single terminal state, but not the one its kind asks for. */
		UNEXPECTED(true),

		/** Still scheduled, ready or running after the queue was given time to drain. */
		UNFINISHED(true),

		/** In no terminal state and no longer queued. */
		LOST(true);

		private final boolean violation;

		private final String field;

		Outcome(boolean violation) {
			this.violation = violation;
			this.field = name().toLowerCase(Locale.ROOT);
		}

	}

}

package dev.delayedtasks.benchmarks;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.delayedtasks.benchmarks.SoakPlan.Cancel;
import dev.delayedtasks.benchmarks.SoakPlan.PlannedTask;
import dev.delayedtasks.benchmarks.SoakTask.Kind;
import dev.delayedtasks.benchmarks.SoakVerdict.Outcome;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The soak's rules: exactly one terminal state per task, the one its kind asks for.
 */
class SoakVerdictTests {

	private final Map<String, Long> runs = new HashMap<>();

	private final Map<String, Long> succeeded = new HashMap<>();

	private final Map<String, Long> failed = new HashMap<>();

	private final Map<String, Long> early = new HashMap<>();

	@Test
	void tasksThatEndAsTheirKindSaysAreClean() {
		ran("a", 1, 1, 0);
		ran("b", 2, 1, 1);
		ran("c", 3, 0, 3);
		SoakVerdict verdict = judge(List.of(task("a", Kind.SUCCEED), task("b", Kind.FAIL_ONCE),
				task("c", Kind.ALWAYS_FAIL), task("d", Kind.CANCEL).withCancel(Cancel.CANCELLED)), Set.of("c"),
				Set.of());
		assertThat(verdict.count(Outcome.SUCCEEDED)).isEqualTo(2);
		assertThat(verdict.count(Outcome.DEAD_LETTERED)).isOne();
		assertThat(verdict.count(Outcome.CANCELLED)).isOne();
		assertThat(verdict.violations()).isZero();
		assertThat(verdict.fields()).containsEntry("tasks", 4)
			.containsEntry("runs", 6L)
			.containsEntry("lost", 0)
			.containsEntry("violations", 0L);
	}

	@Test
	void duplicateRunsAfterACrashAreCountedButAllowed() {
		ran("a", 3, 2, 0);
		SoakVerdict verdict = judge(List.of(task("a", Kind.SUCCEED)), Set.of(), Set.of());
		assertThat(verdict.count(Outcome.SUCCEEDED)).isOne();
		assertThat(verdict.duplicateSuccesses()).isOne();
		assertThat(verdict.interruptedRuns()).isOne();
		assertThat(verdict.violations()).isZero();
	}

	@Test
	void aTaskInNoTerminalStateIsLost() {
		ran("a", 1, 0, 0);
		SoakVerdict verdict = judge(List.of(task("a", Kind.SUCCEED), task("b", Kind.ALWAYS_FAIL)), Set.of(), Set.of());
		assertThat(verdict.count(Outcome.LOST)).isEqualTo(2);
		assertThat(verdict.violations()).isEqualTo(2);
		assertThat(verdict.examples()).hasSize(2).allMatch((example) -> example.startsWith("lost: "));
	}

	@Test
	void aTaskInTwoTerminalStatesIsAViolation() {
		ran("a", 1, 1, 0);
		ran("b", 1, 1, 0);
		SoakVerdict verdict = judge(
				List.of(task("a", Kind.CANCEL).withCancel(Cancel.CANCELLED), task("b", Kind.SUCCEED)), Set.of("b"),
				Set.of());
		assertThat(verdict.count(Outcome.RAN_AFTER_CANCEL)).isOne();
		assertThat(verdict.count(Outcome.SUCCEEDED_AND_DEAD)).isOne();
		assertThat(verdict.violations()).isEqualTo(2);
	}

	@Test
	void theWrongTerminalStateOrAnUnfinishedTaskIsAViolation() {
		ran("a", 3, 0, 3);
		SoakVerdict verdict = judge(List.of(task("a", Kind.FAIL_ONCE), task("b", Kind.SUCCEED)), Set.of("a"),
				Set.of("b"));
		assertThat(verdict.count(Outcome.UNEXPECTED)).isOne();
		assertThat(verdict.count(Outcome.UNFINISHED)).isOne();
		assertThat(verdict.violations()).isEqualTo(2);
	}

	@Test
	void anEarlyRunIsAViolation() {
		ran("a", 1, 1, 0);
		this.early.put("a", 1L);
		SoakVerdict verdict = judge(List.of(task("a", Kind.SUCCEED)), Set.of(), Set.of());
		assertThat(verdict.count(Outcome.SUCCEEDED)).isOne();
		assertThat(verdict.violations()).isOne();
		assertThat(verdict.fields()).containsEntry("early", 1L);
	}

	@Test
	void tasksWhoseFateTheCoordinatorCannotKnowAreNotLost() {
		ran("running", 1, 0, 0);
		SoakVerdict verdict = judge(List.of(new PlannedTask("unsent", Kind.SUCCEED, false, Cancel.NONE),
				task("timed-out-cancel", Kind.CANCEL).withCancel(Cancel.FAILED),
				task("running", Kind.CANCEL).withCancel(Cancel.REFUSED)), Set.of(), Set.of());
		assertThat(verdict.count(Outcome.NEVER_STORED)).isOne();
		assertThat(verdict.count(Outcome.CANCELLED)).isOne();
		assertThat(verdict.count(Outcome.CANCELLED_WHILE_RUNNING)).isOne();
		assertThat(verdict.violations()).isZero();
	}

	@Test
	void aTaskWhoseScheduleCallFailedButThatRanIsJudgedLikeAnyOther() {
		ran("a", 1, 1, 0);
		SoakVerdict verdict = judge(List.of(new PlannedTask("a", Kind.SUCCEED, false, Cancel.NONE)), Set.of(),
				Set.of());
		assertThat(verdict.count(Outcome.SUCCEEDED)).isOne();
	}

	private void ran(String id, long runs, long succeeded, long failed) {
		this.runs.put(id, runs);
		this.succeeded.put(id, succeeded);
		this.failed.put(id, failed);
	}

	private SoakVerdict judge(List<PlannedTask> tasks, Set<String> dead, Set<String> pending) {
		return SoakVerdict.judge(tasks,
				new SoakLedger.Snapshot(this.runs, this.succeeded, this.failed, this.early, Map.of(), List.of()), dead,
				pending);
	}

	private static PlannedTask task(String id, Kind kind) {
		return new PlannedTask(id, kind, true, Cancel.NONE);
	}

}

package dev.delayedtasks.benchmarks;

import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.stereotype.Component;

/**
 * Turns a {@link Recording} into an {@link Analysis}: lateness from the Redis times in
 * each run's context, early starts, lost and duplicated tasks, and retry delays. The one
 * analyzer of every workload, so their numbers compare.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class RunAnalyzer {

	Analysis analyze(Recording recording) {
		Map<String, Long> expected = recording.expected();
		List<TaskRun> runs = recording.runs();
		Map<String, TaskRun> byAttempt = new HashMap<>();
		Set<String> ended = new HashSet<>();
		int early = 0;
		int dup = 0;
		long[] lateness = new long[runs.size()];
		double[] localLateness = new double[runs.size()];
		long[] runMicros = new long[runs.size()];
		long[] dueMs = runs.stream().mapToLong(TaskRun::dueMs).toArray();
		long[] startedMs = runs.stream().mapToLong(TaskRun::startedMs).toArray();
		for (int i = 0; i < runs.size(); i++) {
			TaskRun run = runs.get(i);
			lateness[i] = run.latenessMs();
			localLateness[i] = run.localMicros() / 1000.0 - run.dueMs();
			runMicros[i] = run.localMicros();
			if (run.latenessMs() < 0) {
				early++;
			}
			if (!expected.containsKey(run.id()) || byAttempt.putIfAbsent(key(run.id(), run.attempt()), run) != null) {
				dup++;
			}
			if (run.outcome().isFinal()) {
				ended.add(run.id());
			}
		}
		long[] retryDelays = byAttempt.values()
			.stream()
			.filter((run) -> byAttempt.containsKey(key(run.id(), run.attempt() - 1)))
			.mapToLong((run) -> run.startedMs() - byAttempt.get(key(run.id(), run.attempt() - 1)).startedMs())
			.sorted()
			.toArray();
		int lost = (int) expected.keySet().stream().filter((id) -> !ended.contains(id)).count();
		long[] enqueueMicros = expected.values().stream().mapToLong(Long::longValue).sorted().toArray();
		Arrays.sort(lateness);
		Arrays.sort(localLateness);
		Arrays.sort(runMicros);
		return new Analysis(expected.size(), runs.size(), early, lost, dup, lateness, localLateness, retryDelays,
				recording.startMicros(), enqueueMicros, runMicros, dueMs, startedMs, null);
	}

	private static String key(String id, int attempt) {
		return id + "#" + attempt;
	}

}

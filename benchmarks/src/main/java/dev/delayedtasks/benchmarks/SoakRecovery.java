package dev.delayedtasks.benchmarks;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * How fast work resumed after each fault. After a kill: from the kill to the start of the
 * next delivery of each run the killed worker had in flight (lease expiry plus reap grace
 * plus a claim, in theory). After the outage: from {@code SIGCONT} to the first runs of
 * the tasks that fell due while Redis was stopped.
 *
 * @param inFlight runs in flight at the kills
 * @param recoveredMs the time to the next delivery of each run that had one, sorted
 * @param outage the outage, or {@code null}
 * @param overdueMs for each task first run after the outage and due before its end: its
 * start minus the end of the outage, sorted
 * @author delayed-tasks
 * @since 0.1.0
 */
record SoakRecovery(int inFlight, long[] recoveredMs, RedisOutage.@Nullable Stop outage, long[] overdueMs) {

	static SoakRecovery of(List<SoakChaos.Kill> kills, RedisOutage.@Nullable Stop outage, SoakLedger.Snapshot ledger) {
		int inFlight = 0;
		long[] recovered = new long[kills.stream().mapToInt((kill) -> kill.inFlight().size()).sum()];
		int count = 0;
		for (SoakChaos.Kill kill : kills) {
			for (Map.Entry<String, Integer> run : kill.inFlight().entrySet()) {
				inFlight++;
				Long restarted = ledger.redeliveredStarts().get(run.getKey() + ":" + (run.getValue() + 1));
				// A delivery that started before the kill had taken over a lost lease
				// already: it is no recovery from the kill.
				if (restarted != null && restarted >= kill.atMillis()) {
					recovered[count++] = restarted - kill.atMillis();
				}
			}
		}
		long[] sorted = Arrays.copyOf(recovered, count);
		Arrays.sort(sorted);
		// Redis runs on this host when it is stopped, so its clock is this process's.
		long[] overdue = (outage != null) ? ledger.firstRuns()
			.stream()
			.filter((run) -> run.startedAtMillis() >= outage.stoppedAtMillis()
					&& run.dueAtMillis() < outage.continuedAtMillis())
			.mapToLong((run) -> run.startedAtMillis() - outage.continuedAtMillis())
			.sorted()
			.toArray() : new long[0];
		return new SoakRecovery(inFlight, sorted, outage, overdue);
	}

	/**
	 * The result line's fields.
	 * @return runs in flight at the kills, how many started again, the p50 and max time
	 * to that; the outage's length and the time to the first and the last run of the
	 * tasks it held up
	 */
	Map<String, Object> fields() {
		Map<String, Object> fields = WorkloadResult.fields("in_flight_at_kills", this.inFlight, "rerun_after_kill",
				this.recoveredMs.length, "recovery_p50_ms", Analysis.percentile(this.recoveredMs, 0.5),
				"recovery_max_ms", Analysis.percentile(this.recoveredMs, 1.0));
		if (this.outage == null) {
			fields.put("outage_ms", "none");
		}
		else {
			fields.putAll(WorkloadResult.fields("outage_ms", this.outage.length().toMillis(), "overdue_at_outage_end",
					this.overdueMs.length, "outage_first_run_ms", Analysis.percentile(this.overdueMs, 0.0),
					"outage_all_overdue_ran_ms", Analysis.percentile(this.overdueMs, 1.0)));
		}
		return fields;
	}

}

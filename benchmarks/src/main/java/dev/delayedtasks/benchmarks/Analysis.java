package dev.delayedtasks.benchmarks;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;

/**
 * What a {@link Recording} shows, computed the same way for every workload by the
 * {@link RunAnalyzer}.
 *
 * @param expected tasks expected to run
 * @param runs handler runs recorded
 * @param early runs that started before their due time (Redis time)
 * @param lost expected tasks that never ended (neither succeeded nor were dead-lettered)
 * @param dup runs beyond the first of a task and attempt, plus runs of tasks nobody
 * expected
 * @param latenessMs start minus due of every run, Redis time, sorted
 * @param localLatenessMs local handler entry minus due of every run, sorted (same host:
 * one clock)
 * @param retryDelaysMs start of attempt n+1 minus start of attempt n, sorted
 * @param startMicros when the recording started, local epoch microseconds
 * @param enqueueMicros enqueue times of the expected tasks, sorted
 * @param runMicros handler entry times of every run, sorted
 * @param dueMs due time of every run, Redis time, in recording order
 * @param startedMs start time of every run, Redis time, in the order of {@code dueMs}
 * @param costs what the round cost, or {@code null} when not measured
 * @author delayed-tasks
 * @since 0.1.0
 */
record Analysis(int expected, int runs, int early, int lost, int dup, long[] latenessMs, double[] localLatenessMs,
		long[] retryDelaysMs, long startMicros, long[] enqueueMicros, long[] runMicros, long[] dueMs, long[] startedMs,
		@Nullable Costs costs) {

	/**
	 * A copy with the round's costs.
	 * @param measured the costs
	 * @return the copy
	 */
	Analysis withCosts(Costs measured) {
		return new Analysis(this.expected, this.runs, this.early, this.lost, this.dup, this.latenessMs,
				this.localLatenessMs, this.retryDelaysMs, this.startMicros, this.enqueueMicros, this.runMicros,
				this.dueMs, this.startedMs, measured);
	}

	/**
	 * The nearest-rank percentile of a sorted array.
	 * @param sorted the values
	 * @param fraction the percentile as a fraction, for example 0.99
	 * @return the value, 0 when there are none
	 */
	/**
	 * The heap its per-task figures take: what a measurement of the heap around a round
	 * subtracts, since the round's result holds them.
	 * @return bytes, array headers included
	 */
	long heapBytes() {
		long bytes = 0;
		for (long[] array : new long[][] { this.latenessMs, this.retryDelaysMs, this.enqueueMicros, this.runMicros,
				this.dueMs, this.startedMs }) {
			bytes += 16 + 8L * array.length;
		}
		return bytes + 16 + 8L * this.localLatenessMs.length;
	}

	static long percentile(long[] sorted, double fraction) {
		if (sorted.length == 0) {
			return 0;
		}
		int rank = (int) Math.ceil(fraction * sorted.length);
		return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
	}

	static double percentile(double[] sorted, double fraction) {
		if (sorted.length == 0) {
			return 0;
		}
		int rank = (int) Math.ceil(fraction * sorted.length);
		return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
	}

	/**
	 * Lateness of the runs due after the producer's last enqueue: the lateness of a
	 * system whose producer no longer competes for the CPU.
	 * @return {@code after_enqueue_n}, {@code after_enqueue_p99_ms} and
	 * {@code after_enqueue_max_ms}
	 */
	Map<String, Object> afterEnqueueFields() {
		long lastEnqueueMs = (this.enqueueMicros.length > 0) ? this.enqueueMicros[this.enqueueMicros.length - 1] / 1000
				: Long.MAX_VALUE;
		long[] after = IntStream.range(0, this.dueMs.length)
			.filter((i) -> this.dueMs[i] > lastEnqueueMs)
			.mapToLong((i) -> this.startedMs[i] - this.dueMs[i])
			.sorted()
			.toArray();
		Map<String, Object> fields = new LinkedHashMap<>();
		fields.put("after_enqueue_n", after.length);
		fields.put("after_enqueue_p99_ms", percentile(after, 0.99));
		fields.put("after_enqueue_max_ms", percentile(after, 1.0));
		return fields;
	}

	/**
	 * End-to-end throughput: expected tasks over the time from {@code fromMicros} to the
	 * last handler run.
	 * @param fromMicros the first enqueue, local epoch microseconds
	 * @return tasks per second
	 */
	double throughputPerSecond(long fromMicros) {
		if (this.runMicros.length == 0) {
			return 0;
		}
		long last = this.runMicros[this.runMicros.length - 1];
		return this.expected * 1_000_000.0 / Math.max(1, last - fromMicros);
	}

	/**
	 * Whether every task ran, none early and none twice.
	 * @return whether the round was clean
	 */
	boolean clean() {
		return this.early == 0 && this.lost == 0 && this.dup == 0;
	}

	/**
	 * The fields every workload line ends with: lateness percentiles and the
	 * early/lost/dup counts.
	 * @return the fields, in order
	 */
	Map<String, Object> fields() {
		Map<String, Object> fields = new LinkedHashMap<>();
		fields.put("p50_ms", percentile(this.latenessMs, 0.50));
		fields.put("p90_ms", percentile(this.latenessMs, 0.90));
		fields.put("p99_ms", percentile(this.latenessMs, 0.99));
		fields.put("p999_ms", percentile(this.latenessMs, 0.999));
		fields.put("max_ms", percentile(this.latenessMs, 1.0));
		fields.put("local_p99_ms", String.format(Locale.ROOT, "%.1f", percentile(this.localLatenessMs, 0.99)));
		if (this.costs != null) {
			fields.putAll(this.costs.fields());
		}
		fields.put("early", this.early);
		fields.put("lost", this.lost);
		fields.put("dup", this.dup);
		return fields;
	}

}

package dev.delayedtasks.benchmarks;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * One line of results: {@code workload=<name> key=value ...}, in a fixed order, ending
 * with {@code early=.. lost=.. dup=..}.
 *
 * @param workload the name on the line
 * @param fields the values, formatted
 * @param analysis the runs behind the line, or {@code null} for a line without runs
 * @author delayed-tasks
 * @since 0.1.0
 */
record WorkloadResult(String workload, Map<String, String> fields, @Nullable Analysis analysis) {

	private static final List<String> FAILURES = List.of("early", "lost", "dup", "violations");

	/**
	 * Create a result.
	 */
	WorkloadResult {
		fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields));
	}

	/**
	 * A result with the given leading fields followed by the analysis' fields.
	 * @param workload the name on the line
	 * @param leading the workload's own fields, in order
	 * @param analysis the runs
	 * @return the result
	 */
	static WorkloadResult of(String workload, Map<String, ?> leading, @Nullable Analysis analysis) {
		Map<String, String> fields = new LinkedHashMap<>();
		leading.forEach((name, value) -> fields.put(name, format(value)));
		if (analysis != null) {
			analysis.fields().forEach((name, value) -> fields.put(name, format(value)));
		}
		return new WorkloadResult(workload, fields, analysis);
	}

	/**
	 * Ordered fields from alternating names and values.
	 * @param namesAndValues {@code "n", 20000, "enqueue_per_s", 6512.3, ...}
	 * @return the fields, in order
	 */
	static Map<String, Object> fields(Object... namesAndValues) {
		Map<String, Object> fields = new LinkedHashMap<>();
		for (int i = 0; i + 1 < namesAndValues.length; i += 2) {
			fields.put((String) namesAndValues[i], namesAndValues[i + 1]);
		}
		return fields;
	}

	/**
	 * A copy with one field replaced.
	 * @param name the field
	 * @param value its new value
	 * @return the copy
	 */
	WorkloadResult withField(String name, Object value) {
		Map<String, String> copy = new LinkedHashMap<>(this.fields);
		copy.put(name, format(value));
		return new WorkloadResult(this.workload, copy, this.analysis);
	}

	/**
	 * Whether no task started early, was lost or ran twice, and no other rule of the
	 * workload was broken ({@code violations}). A result without one of these fields has
	 * nothing of that kind to report: the soak counts duplicate runs, which are allowed
	 * after a crash, under another name.
	 * @return whether the result is clean
	 */
	boolean clean() {
		return FAILURES.stream().allMatch((name) -> "0".equals(this.fields.getOrDefault(name, "0")));
	}

	/**
	 * The machine-readable line.
	 * @return {@code workload=<name> key=value ...}
	 */
	String line() {
		return "workload=" + this.workload + " "
				+ this.fields.entrySet()
					.stream()
					.map((entry) -> entry.getKey() + "=" + entry.getValue())
					.collect(Collectors.joining(" "));
	}

	private static String format(Object value) {
		if (value instanceof Double number) {
			// Small figures (microseconds per task) keep a decimal.
			return (Math.abs(number) < 100) ? String.format(Locale.ROOT, "%.1f", number)
					: Long.toString(Math.round(number));
		}
		return String.valueOf(value).replace(' ', '_');
	}

}

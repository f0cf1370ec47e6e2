package dev.delayedtasks.benchmarks;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What one kind of dashboard view cost, per view, over a measured batch.
 *
 * @param views the views measured
 * @param commands the commands the dashboard sent to Redis over the batch, by name
 * @param redisMicros the time Redis spent in them ({@code INFO commandstats})
 * @param redisCpuMicros Redis's CPU time over the batch ({@code INFO cpu}, every
 * client's)
 * @param connections connections Redis accepted over the batch
 * @param nanos each view's time on this side, request to response
 * @param attempts the batch this is (1 unless a batch was disturbed)
 * @param otherScripts script calls other clients made during the batch
 * @param uneven whether the views sent different numbers of commands
 * @author delayed-tasks
 * @since 0.1.0
 */
record PageViewCost(int views, Map<String, Long> commands, double redisMicros, long redisCpuMicros, long connections,
		long[] nanos, int attempts, long otherScripts, boolean uneven) {

	boolean disturbed() {
		return this.otherScripts != 0 || this.uneven;
	}

	double callsPerView() {
		return this.commands.values().stream().mapToLong(Long::longValue).sum() / (double) this.views;
	}

	double redisMicrosPerView() {
		return this.redisMicros / this.views;
	}

	/**
	 * The figures for a result line, each name with the given prefix.
	 * @param prefix {@code ""}, or {@code small_} for the small fill
	 * @return the fields
	 */
	Map<String, Object> fields(String prefix) {
		long[] sorted = this.nanos.clone();
		Arrays.sort(sorted);
		Map<String, Object> fields = new LinkedHashMap<>();
		fields.put(prefix + "calls_per_view", this.callsPerView());
		fields.put(prefix + "commands",
				this.commands.entrySet()
					.stream()
					.map((command) -> command.getKey() + ":" + number(command.getValue() / (double) this.views))
					.collect(Collectors.joining(",")));
		fields.put(prefix + "redis_us_per_view", redisMicrosPerView());
		fields.put(prefix + "redis_cpu_us_per_view", (double) this.redisCpuMicros / this.views);
		fields.put(prefix + "connections_per_view", (double) this.connections / this.views);
		fields.put(prefix + "p50_ms", percentile(sorted, 0.50) / 1e6);
		fields.put(prefix + "p99_ms", percentile(sorted, 0.99) / 1e6);
		fields.put(prefix + "attempts", this.attempts);
		fields.put(prefix + "disturbed", disturbed() ? "yes" : "no");
		return fields;
	}

	private static long percentile(long[] sorted, double quantile) {
		if (sorted.length == 0) {
			return 0;
		}
		int index = (int) Math.ceil(quantile * sorted.length) - 1;
		return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
	}

	private static String number(double value) {
		return (value == Math.rint(value)) ? Long.toString((long) value) : String.format(Locale.ROOT, "%.1f", value);
	}

}

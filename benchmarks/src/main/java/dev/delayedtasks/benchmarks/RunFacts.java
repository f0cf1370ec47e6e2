package dev.delayedtasks.benchmarks;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What a run's numbers depend on: JVM, Redis, machine and settings. Printed as the header
 * line and at the top of the report.
 *
 * @param jvm the JVM version
 * @param vm the JVM's name
 * @param redis the Redis version
 * @param redisOrigin {@code private} (started for the run) or {@code given}
 * ({@code --redis-url})
 * @param cores available processors
 * @param maxHeapMb the JVM's maximum heap
 * @param os operating system and version
 * @param keyPrefix the run's key prefix
 * @param size full or tiny
 * @param workloads the workloads asked for
 * @param startedAt when the run started
 * @author delayed-tasks
 * @since 0.1.0
 */
record RunFacts(String jvm, String vm, String redis, String redisOrigin, int cores, long maxHeapMb, String os,
		String keyPrefix, String size, String workloads, Instant startedAt) {

	static RunFacts of(String redisVersion, String redisOrigin, String keyPrefix, BenchmarkProperties properties) {
		return new RunFacts(Runtime.version().toString(), System.getProperty("java.vm.name"), redisVersion, redisOrigin,
				Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory() >> 20,
				System.getProperty("os.name") + " " + System.getProperty("os.version"), keyPrefix,
				properties.size().name().toLowerCase(Locale.ROOT), properties.workload(), Instant.now());
	}

	Map<String, String> fields() {
		Map<String, String> fields = new LinkedHashMap<>();
		fields.put("jvm", this.jvm);
		fields.put("vm", this.vm);
		fields.put("redis", this.redis);
		fields.put("redis_origin", this.redisOrigin);
		fields.put("cores", Integer.toString(this.cores));
		fields.put("heap_max_mb", Long.toString(this.maxHeapMb));
		fields.put("os", this.os);
		fields.put("key_prefix", this.keyPrefix);
		fields.put("size", this.size);
		fields.put("workloads", this.workloads);
		fields.put("started", this.startedAt.toString());
		return fields;
	}

	/**
	 * The header line.
	 * @return {@code run jvm=... redis=... cores=...}
	 */
	String line() {
		return "run " + fields().entrySet()
			.stream()
			.map((entry) -> entry.getKey() + "=" + entry.getValue().replace(' ', '_'))
			.collect(Collectors.joining(" "));
	}

}

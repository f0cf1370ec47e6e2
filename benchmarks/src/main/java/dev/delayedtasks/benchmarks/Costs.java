package dev.delayedtasks.benchmarks;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What a round cost, in figures that do not depend on how busy the machine was: Redis
 * calls this JVM made, CPU time Redis used, CPU time this JVM used and bytes it
 * allocated, from the producer's first call until every task ended and the queue was
 * idle.
 *
 * @param tasks the round's tasks
 * @param redisCalls commands this JVM completed on Redis
 * @param redisCpuMicros Redis's CPU time ({@code used_cpu_user} plus {@code used_cpu_sys}
 * of {@code INFO cpu})
 * @param jvmCpuMicros this process's CPU time
 * @param allocatedBytes heap bytes this JVM's threads allocated
 * @author delayed-tasks
 * @since 0.1.0
 */
record Costs(int tasks, long redisCalls, long redisCpuMicros, long jvmCpuMicros, long allocatedBytes) {

	/**
	 * The costs per task, for a result line.
	 * @return {@code redis_calls_per_task}, {@code redis_cpu_us_per_task},
	 * {@code jvm_cpu_us_per_task} and {@code alloc_kb_per_task}
	 */
	Map<String, Object> fields() {
		double per = Math.max(1, this.tasks);
		Map<String, Object> fields = new LinkedHashMap<>();
		fields.put("redis_calls_per_task", String.format(Locale.ROOT, "%.2f", this.redisCalls / per));
		fields.put("redis_cpu_us_per_task", this.redisCpuMicros / per);
		fields.put("jvm_cpu_us_per_task", this.jvmCpuMicros / per);
		fields.put("alloc_kb_per_task", this.allocatedBytes / 1024.0 / per);
		return fields;
	}

}

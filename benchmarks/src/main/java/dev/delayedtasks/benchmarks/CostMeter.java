package dev.delayedtasks.benchmarks;

import java.lang.management.ManagementFactory;

import com.sun.management.OperatingSystemMXBean;
import com.sun.management.ThreadMXBean;

import org.springframework.stereotype.Component;

/**
 * Reads the counters behind {@link Costs}: before a round, and the difference after it.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class CostMeter {

	private final RedisCallCounter calls;

	private final RedisProbe redis;

	private final OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

	private final ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();

	CostMeter(RedisCallCounter calls, RedisProbe redis) {
		this.calls = calls;
		this.redis = redis;
	}

	/**
	 * The counters now.
	 * @return a reading to pass to {@link #since}
	 */
	Reading read() {
		return new Reading(this.calls.calls(), this.redis.cpuMicros(), this.os.getProcessCpuTime() / 1000,
				this.threads.getTotalThreadAllocatedBytes());
	}

	/**
	 * What was spent since a reading.
	 * @param start the reading before the round
	 * @param tasks the round's tasks
	 * @return the costs
	 */
	Costs since(Reading start, int tasks) {
		Reading end = read();
		return new Costs(tasks, end.calls - start.calls, end.redisCpuMicros - start.redisCpuMicros,
				end.jvmCpuMicros - start.jvmCpuMicros, end.allocatedBytes - start.allocatedBytes);
	}

	record Reading(long calls, long redisCpuMicros, long jvmCpuMicros, long allocatedBytes) {
	}

}

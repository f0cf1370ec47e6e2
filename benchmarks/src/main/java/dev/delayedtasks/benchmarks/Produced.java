package dev.delayedtasks.benchmarks;

/**
 * What a producer did: how many tasks it scheduled, from when to when.
 *
 * @param count the tasks scheduled
 * @param startMicros the first call, local clock, epoch microseconds
 * @param endMicros the return of the last call, local clock, epoch microseconds
 * @param cpuNanos CPU time the producing threads used, or -1 when not measured
 * @author delayed-tasks
 * @since 0.1.0
 */
record Produced(int count, long startMicros, long endMicros, long cpuNanos) {

	Produced(int count, long startMicros, long endMicros) {
		this(count, startMicros, endMicros, -1);
	}

	/**
	 * CPU time of the producing threads per task: the library's own cost of a call, which
	 * shared machines disturb less than the rate.
	 * @return microseconds per task, or -1 when not measured
	 */
	double cpuMicrosPerTask() {
		return (this.cpuNanos < 0) ? -1 : this.cpuNanos / 1000.0 / Math.max(1, this.count);
	}

	/**
	 * The enqueue rate.
	 * @return tasks per second
	 */
	double perSecond() {
		return this.count * 1_000_000.0 / Math.max(1, this.endMicros - this.startMicros);
	}

}

package dev.delayedtasks.benchmarks;

/**
 * What a producer did: how many tasks it scheduled, from when to when.
 *
 * @param count the tasks scheduled
 * @param startMicros the first call, local clock, epoch microseconds
 * @param endMicros the return of the last call, local clock, epoch microseconds
 * @author delayed-tasks
 * @since 0.1.0
 */
record Produced(int count, long startMicros, long endMicros) {

	/**
	 * The enqueue rate.
	 * @return tasks per second
	 */
	double perSecond() {
		return this.count * 1_000_000.0 / Math.max(1, this.endMicros - this.startMicros);
	}

}

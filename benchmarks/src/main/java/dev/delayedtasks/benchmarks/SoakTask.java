package dev.delayedtasks.benchmarks;

/**
 * The payload of a soak task: what its handler does.
 *
 * @param seq the task's number in the run
 * @param kind how its runs end
 * @param workMillis how long each run works before it ends, so that worker kills catch
 * runs in flight
 * @author delayed-tasks
 * @since 0.1.0
 */
record SoakTask(int seq, Kind kind, int workMillis) {

	/**
	 * Whether a run of this task fails.
	 * @param attempt the run's attempt, 1 for the first
	 * @return whether the handler throws
	 */
	boolean fails(int attempt) {
		return this.kind == Kind.ALWAYS_FAIL || (this.kind == Kind.FAIL_ONCE && attempt == 1);
	}

	/**
	 * How the runs of a soak task end, and so which terminal state it must reach.
	 */
	enum Kind {

		/** Succeeds on its first attempt. */
		SUCCEED,

		/** Fails its first attempt and succeeds on the retry. */
		FAIL_ONCE,

		/** Fails every attempt, so it is dead-lettered when its retries are exhausted. */
		ALWAYS_FAIL,

		/** Cancelled by the coordinator half-way to its due time; never runs. */
		CANCEL

	}

}

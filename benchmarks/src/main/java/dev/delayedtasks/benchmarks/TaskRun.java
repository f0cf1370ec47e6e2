package dev.delayedtasks.benchmarks;

/**
 * One handler run as the recorder saw it.
 *
 * @param id the task id
 * @param attempt the attempt, 1 for the first run
 * @param dueMs the due time, Redis time, epoch milliseconds
 * @param startedMs the start time the claim saw, Redis time, epoch milliseconds
 * @param localMicros when the handler was entered, local clock, epoch microseconds
 * @param outcome how the run ended
 * @author delayed-tasks
 * @since 0.1.0
 */
record TaskRun(String id, int attempt, long dueMs, long startedMs, long localMicros, Outcome outcome) {

	/**
	 * How a run ended, as the handler decided it.
	 */
	enum Outcome {

		/** Returned normally: the task is done. */
		SUCCEEDED,

		/** Failed and will be retried. */
		RETRIED,

		/** Failed for good: the task goes to the dead letters. */
		DEAD;

		boolean isFinal() {
			return this != RETRIED;
		}

	}

	/**
	 * Lateness: start minus due, both Redis time.
	 * @return the lateness in milliseconds, negative for an early start
	 */
	long latenessMs() {
		return this.startedMs - this.dueMs;
	}

}

package dev.delayedtasks.benchmarks;

/**
 * One measured round of one queue: what the producer did and what the handler runs show.
 *
 * @param produced the producer's work
 * @param analysis the runs, analyzed
 * @param concurrency the handler's concurrency
 * @author delayed-tasks
 * @since 0.1.0
 */
record Round(Produced produced, Analysis analysis, int concurrency) {

	double throughputPerSecond() {
		return this.analysis.throughputPerSecond(this.produced.startMicros());
	}

}

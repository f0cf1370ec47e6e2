package dev.delayedtasks.benchmarks;

import java.util.List;

/**
 * A workload the benchmarks can run by name. Implementations are beans, in the order
 * {@code --workload=all} runs them (manual ones excepted).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
interface Workload {

	/**
	 * The name {@code --workload} selects it by.
	 * @return the name
	 */
	String name();

	/**
	 * Run the workload and delete its keys.
	 * @return one result per reported figure (most workloads have one)
	 */
	List<WorkloadResult> run();

	/**
	 * Whether the workload runs only when named: {@code all} leaves it out, and it needs
	 * no warm-up because it measures no latency (the soak, which runs for minutes).
	 * @return whether the workload is manual
	 */
	default boolean manual() {
		return false;
	}

	/**
	 * Whether the workload runs before the warm-up, because it measures a cold process.
	 * @return whether it runs first
	 */
	default boolean beforeWarmup() {
		return false;
	}

}

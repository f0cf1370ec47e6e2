package dev.delayedtasks.benchmarks;

/**
 * The queues of the workloads, one per workload so that each has a handler of its own.
 * Handler ids equal queue names.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class Queues {

	static final String WARMUP = "bench-warmup";

	static final String DELAYED = "bench-delayed";

	static final String IMMEDIATE = "bench-immediate";

	static final String RETRY = "bench-retry";

	static final String BACKLOG = "bench-backlog";

	static final String STEADY = "bench-steady";

	static final String PRODUCERS = "bench-producers";

	static final String STARTUP = "bench-startup";

	static final String ASYNC = "bench-async";

	static final String REACTIVE = "bench-reactive";

	static final String RATE_LIMITED = "bench-rate-limited";

	static final String MANY_KEYS = "bench-many-keys";

	static final String SOAK = "bench-soak";

	// Memory per task depends on key length: the memory queues have names of a typical
	// length (like "emails").
	static final String MEMORY_SCHEDULED = "msched";

	static final String MEMORY_READY = "mready";

	static final String MEMORY_DEAD = "mdead";

	private Queues() {
	}

}

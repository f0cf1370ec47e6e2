package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.TaskId;

/**
 * What one measured round of one queue produced and ran: the tasks expected to run with
 * their enqueue times, and every handler run. Filled by the producer and the handler
 * threads, read by the {@link RunAnalyzer}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class Recording implements EnqueueSink {

	private final String queue;

	private final long startMicros;

	private final Map<String, Long> expected = new ConcurrentHashMap<>();

	private final Queue<TaskRun> runs = new ConcurrentLinkedQueue<>();

	private final AtomicInteger finalRuns = new AtomicInteger();

	Recording(String queue) {
		this.queue = queue;
		this.startMicros = nowMicros();
	}

	/**
	 * The local clock in epoch microseconds, the resolution runs are recorded with.
	 * @return the time
	 */
	static long nowMicros() {
		Instant now = Instant.now();
		return now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
	}

	@Override
	public void enqueued(TaskId id, long localMicros) {
		this.expected.put(id.value(), localMicros);
	}

	void record(TaskRun run) {
		this.runs.add(run);
		if (run.outcome().isFinal()) {
			this.finalRuns.incrementAndGet();
		}
	}

	/**
	 * Wait until as many runs ended for good (success or dead letter) as tasks are
	 * expected.
	 * @param timeout the longest wait
	 * @return whether they did
	 */
	boolean awaitFinalRuns(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (this.finalRuns.get() < this.expected.size()) {
			if (System.nanoTime() > deadline) {
				return false;
			}
			Pause.millis(5);
		}
		return true;
	}

	String queue() {
		return this.queue;
	}

	long startMicros() {
		return this.startMicros;
	}

	Map<String, Long> expected() {
		return Map.copyOf(this.expected);
	}

	List<TaskRun> runs() {
		return List.copyOf(this.runs);
	}

}

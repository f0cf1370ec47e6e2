package dev.delayedtasks.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code immediate}: tasks without delay, first with {@code schedule} in a loop, then
 * with {@code scheduleAll} batches ({@code immediate-batch}), then with {@code track} in
 * a loop ({@code immediate-tracked}), then with {@code track} from 16 threads at once
 * ({@code immediate-tracked16}). Reports the enqueue rate and the end-to-end throughput,
 * first enqueue to last run; for tracked tasks also first enqueue to the last outcome the
 * producer learned (the outcome delivery rate), the Redis memory of one outcome record,
 * and the heap still in use after a full collection once every outcome of the one-thread
 * round was delivered, against the heap before it.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(2)
class ImmediateWorkload implements Workload {

	private static final Duration TIMEOUT = Duration.ofMinutes(2);

	private static final int TRACKING_THREADS = 16;

	private final Rounds rounds;

	private final TaskProducer producer;

	private final RedisProbe redis;

	private final BenchmarkProperties.Immediate settings;

	ImmediateWorkload(Rounds rounds, TaskProducer producer, RedisProbe redis, BenchmarkProperties properties) {
		this.rounds = rounds;
		this.producer = producer;
		this.redis = redis;
		this.settings = properties.immediate();
	}

	@Override
	public String name() {
		return "immediate";
	}

	@Override
	public List<WorkloadResult> run() {
		String queue = Queues.IMMEDIATE;
		int n = this.settings.tasks();
		Round oneByOne = this.rounds.measure(queue, TIMEOUT,
				(sink) -> this.producer.oneByOne(n, (i) -> TaskRequest.of(queue, i), sink));
		Round batched = this.rounds.measure(queue, TIMEOUT,
				(sink) -> this.producer.inBatches(n, this.settings.batch(), (i) -> TaskRequest.of(queue, i), sink));
		this.redis.deleteQueue(queue);
		long heapBefore = heapAfterGc();
		WorkloadResult trackedResult = tracked(queue, n, 1);
		// Once the round returned, what is left beyond its own recorded figures is what
		// the library keeps for tasks whose outcomes were delivered.
		long retained = heapAfterGc() - heapBefore
				- ((trackedResult.analysis() != null) ? trackedResult.analysis().heapBytes() : 0);
		WorkloadResult tracked16 = tracked(queue, n, TRACKING_THREADS);
		return List.of(result(name(), oneByOne, "schedule", 1),
				result(name() + "-batch", batched, "scheduleAll", this.settings.batch()),
				trackedResult.withField("heap_retained_bytes", retained)
					.withField("heap_retained_bytes_per_task", (double) retained / n),
				tracked16);
	}

	/**
	 * A round of tracked tasks: {@code threads} threads call {@code track} for {@code n}
	 * tasks in all.
	 * @param queue the queue
	 * @param n how many tasks
	 * @param threads how many producer threads
	 * @return the round's result, with the outcome delivery rate
	 */
	private WorkloadResult tracked(String queue, int n, int threads) {
		List<CompletableFuture<Long>> ends = Collections.synchronizedList(new ArrayList<>(n));
		List<TaskId> trackedIds = Collections.synchronizedList(new ArrayList<>(n));
		Round tracked = this.rounds.measure(queue, TIMEOUT,
				(sink) -> this.producer.tracked(n, threads, (i) -> TaskRequest.of(queue, i), (id, micros) -> {
					trackedIds.add(id);
					sink.enqueued(id, micros);
				}, ends));
		long lastOutcomeMicros = lastOutcome(ends);
		double outcomesPerSecond = n / ((lastOutcomeMicros - tracked.produced().startMicros()) / 1e6);
		long recordBytes = averageRecordBytes(queue, trackedIds);
		this.redis.deleteQueue(queue);
		String name = name() + "-tracked" + ((threads > 1) ? threads : "");
		return result(name, tracked, "track", 1).withField("threads", threads)
			.withField("outcomes_per_s", outcomesPerSecond)
			.withField("outcome_record_bytes", recordBytes);
	}

	/**
	 * The heap in use once the garbage collector ran, as near as a few full collections
	 * get it.
	 * @return bytes
	 */
	private static long heapAfterGc() {
		MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
		long used = Long.MAX_VALUE;
		for (int i = 0; i < 3; i++) {
			System.gc();
			Pause.millis(100);
			used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
		}
		return used;
	}

	private static long lastOutcome(List<CompletableFuture<Long>> ends) {
		long last = 0;
		for (CompletableFuture<Long> end : ends) {
			try {
				last = Math.max(last, end.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for outcomes", ex);
			}
			catch (ExecutionException | TimeoutException ex) {
				throw new IllegalStateException("A tracked task's outcome did not arrive: " + ex, ex);
			}
		}
		return last;
	}

	/**
	 * Average {@code MEMORY USAGE} of up to 1,000 of the round's outcome records.
	 * @param queue the queue
	 * @param ids the round's tasks
	 * @return bytes per record
	 */
	private long averageRecordBytes(String queue, List<TaskId> ids) {
		int sampled = Math.min(ids.size(), 1000);
		long total = 0;
		for (int i = 0; i < sampled; i++) {
			total += this.redis.memoryUsage(this.redis.keys(queue).outcome(ids.get(i).value()));
		}
		return (sampled > 0) ? total / sampled : 0;
	}

	private static WorkloadResult result(String name, Round round, String producer, int batch) {
		return WorkloadResult.of(name,
				WorkloadResult.fields("n", round.analysis().expected(), "concurrency", round.concurrency(), "producer",
						producer, "batch", batch, "enqueue_per_s", round.produced().perSecond(), "throughput_per_s",
						round.throughputPerSecond(), "producer_cpu_us", round.produced().cpuMicrosPerTask()),
				round.analysis());
	}

}

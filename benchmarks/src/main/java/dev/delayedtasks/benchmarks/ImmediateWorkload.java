package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
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
 * a loop ({@code immediate-tracked}). Reports the enqueue rate and the end-to-end
 * throughput, first enqueue to last run; for tracked tasks also first enqueue to the last
 * outcome the producer learned, and the Redis memory of one outcome record.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(2)
class ImmediateWorkload implements Workload {

	private static final Duration TIMEOUT = Duration.ofMinutes(2);

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
		List<CompletableFuture<Long>> ends = new ArrayList<>(n);
		List<TaskId> trackedIds = new ArrayList<>(n);
		Round tracked = this.rounds.measure(queue, TIMEOUT,
				(sink) -> this.producer.tracked(n, (i) -> TaskRequest.of(queue, i), (id, micros) -> {
					trackedIds.add(id);
					sink.enqueued(id, micros);
				}, ends));
		long lastOutcomeMicros = lastOutcome(ends);
		double outcomesPerSecond = n / ((lastOutcomeMicros - tracked.produced().startMicros()) / 1e6);
		long recordBytes = averageRecordBytes(queue, trackedIds);
		this.redis.deleteQueue(queue);
		WorkloadResult trackedResult = result(name() + "-tracked", tracked, "track", 1);
		return List.of(result(name(), oneByOne, "schedule", 1),
				result(name() + "-batch", batched, "scheduleAll", this.settings.batch()),
				trackedResult.withField("outcomes_per_s", outcomesPerSecond)
					.withField("outcome_record_bytes", recordBytes));
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

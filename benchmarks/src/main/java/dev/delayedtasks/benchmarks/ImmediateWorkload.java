package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.List;

import dev.delayedtasks.TaskRequest;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code immediate}: tasks without delay, first with {@code schedule} in a loop, then
 * with {@code scheduleAll} batches ({@code immediate-batch}). Reports the enqueue rate
 * and the end-to-end throughput, first enqueue to last run.
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
		return List.of(result(name(), oneByOne, "schedule", 1),
				result(name() + "-batch", batched, "scheduleAll", this.settings.batch()));
	}

	private static WorkloadResult result(String name, Round round, String producer, int batch) {
		return WorkloadResult.of(name,
				WorkloadResult.fields("n", round.analysis().expected(), "concurrency", round.concurrency(), "producer",
						producer, "batch", batch, "enqueue_per_s", round.produced().perSecond(), "throughput_per_s",
						round.throughputPerSecond(), "producer_cpu_us", round.produced().cpuMicrosPerTask()),
				round.analysis());
	}

}

package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import dev.delayedtasks.TaskRequest;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code delayed}: one producer schedules the tasks as fast as it can with seeded delays
 * uniform in [min, max]; a no-op handler records their start. Reports the enqueue rate
 * and the lateness.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(1)
class DelayedWorkload implements Workload {

	private final Rounds rounds;

	private final TaskProducer producer;

	private final RedisProbe redis;

	private final BenchmarkProperties properties;

	DelayedWorkload(Rounds rounds, TaskProducer producer, RedisProbe redis, BenchmarkProperties properties) {
		this.rounds = rounds;
		this.producer = producer;
		this.redis = redis;
		this.properties = properties;
	}

	@Override
	public String name() {
		return "delayed";
	}

	@Override
	public List<WorkloadResult> run() {
		Round round = measure(Queues.DELAYED);
		this.redis.deleteQueue(Queues.DELAYED);
		Map<String, Object> fields = WorkloadResult.fields("n", round.analysis().expected(), "concurrency",
				round.concurrency(), "enqueue_per_s", round.produced().perSecond());
		fields.putAll(round.analysis().afterEnqueueFields());
		return List.of(WorkloadResult.of(name(), fields, round.analysis()));
	}

	/**
	 * The delayed round on any queue (the backlog workload runs it on top of its
	 * backlog).
	 * @param queue the queue
	 * @return the round
	 */
	Round measure(String queue) {
		BenchmarkProperties.Delayed settings = this.properties.delayed();
		SplittableRandom random = new SplittableRandom(this.properties.seed());
		long min = settings.minDelay().toMillis();
		long span = settings.maxDelay().toMillis() - min;
		return this.rounds.measure(queue, settings.maxDelay().plusMinutes(1),
				(sink) -> this.producer.oneByOne(settings.tasks(),
						(i) -> TaskRequest.of(queue, i).delay(Duration.ofMillis(min + random.nextLong(span + 1))),
						sink));
	}

}

package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

import dev.delayedtasks.TaskRequest;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code steady}: one producer schedules tasks at a constant rate with seeded delays
 * uniform in [0, max], to show lateness under sustained load.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(6)
class SteadyWorkload implements Workload {

	private final Rounds rounds;

	private final TaskProducer producer;

	private final RedisProbe redis;

	private final BenchmarkProperties properties;

	SteadyWorkload(Rounds rounds, TaskProducer producer, RedisProbe redis, BenchmarkProperties properties) {
		this.rounds = rounds;
		this.producer = producer;
		this.redis = redis;
		this.properties = properties;
	}

	@Override
	public String name() {
		return "steady";
	}

	@Override
	public List<WorkloadResult> run() {
		BenchmarkProperties.Steady settings = this.properties.steady();
		String queue = Queues.STEADY;
		SplittableRandom random = new SplittableRandom(this.properties.seed());
		long maxDelay = settings.maxDelay().toMillis();
		Round round = this.rounds.measure(queue, settings.maxDelay().plusMinutes(1),
				(sink) -> this.producer.atRate(settings.tasks(), settings.rate(),
						(i) -> TaskRequest.of(queue, i).delay(Duration.ofMillis(random.nextLong(maxDelay + 1))), sink));
		this.redis.deleteQueue(queue);
		return List.of(WorkloadResult.of(name(),
				WorkloadResult.fields("n", round.analysis().expected(), "concurrency", round.concurrency(),
						"rate_per_s", settings.rate(), "duration_s", settings.duration().toSeconds(), "enqueue_per_s",
						round.produced().perSecond()),
				round.analysis()));
	}

}

package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.List;

import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.benchmarks.BenchmarkHandlers.RetryTask;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code retry}: tasks without delay of which every n-th fails its first attempt and is
 * retried after the queue's back-off (1 s). Every task must succeed exactly once; reports
 * the observed retry delay (start of the retry minus start of the failed attempt, Redis
 * time).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(3)
class RetryWorkload implements Workload {

	private static final Duration TIMEOUT = Duration.ofMinutes(1);

	private final Rounds rounds;

	private final TaskProducer producer;

	private final RedisProbe redis;

	private final BenchmarkProperties.Retry settings;

	RetryWorkload(Rounds rounds, TaskProducer producer, RedisProbe redis, BenchmarkProperties properties) {
		this.rounds = rounds;
		this.producer = producer;
		this.redis = redis;
		this.settings = properties.retry();
	}

	@Override
	public String name() {
		return "retry";
	}

	@Override
	public List<WorkloadResult> run() {
		String queue = Queues.RETRY;
		int every = this.settings.failEvery();
		Round round = this.rounds.measure(queue, TIMEOUT, (sink) -> this.producer.oneByOne(this.settings.tasks(),
				(i) -> TaskRequest.of(queue, new RetryTask(i, i % every == every - 1)), sink));
		this.redis.deleteQueue(queue);
		long[] delays = round.analysis().retryDelaysMs();
		return List.of(WorkloadResult.of(name(),
				WorkloadResult.fields("n", round.analysis().expected(), "concurrency", round.concurrency(),
						"enqueue_per_s", round.produced().perSecond(), "retried", delays.length, "retry_delay_p50_ms",
						Analysis.percentile(delays, 0.5), "retry_delay_max_ms", Analysis.percentile(delays, 1.0)),
				round.analysis()));
	}

}

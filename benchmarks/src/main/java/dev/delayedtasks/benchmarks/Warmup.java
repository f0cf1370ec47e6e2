package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.Map;

import dev.delayedtasks.TaskRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.stereotype.Component;

/**
 * Runs a few thousand tasks, half at once and half after short delays, before the first
 * workload, so that the JIT has compiled the hot paths and Redis has loaded the scripts:
 * the workloads measure a warm system, as a running application is.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class Warmup {

	private static final Log logger = LogFactory.getLog(Warmup.class);

	private final Rounds rounds;

	private final TaskProducer producer;

	private final RedisProbe redis;

	private final int tasks;

	Warmup(Rounds rounds, TaskProducer producer, RedisProbe redis, BenchmarkProperties properties) {
		this.rounds = rounds;
		this.producer = producer;
		this.redis = redis;
		this.tasks = properties.warmupTasks();
	}

	void run() {
		String queue = Queues.WARMUP;
		Round round = this.rounds.measure(queue, Duration.ofMinutes(1), (sink) -> this.producer.oneByOne(this.tasks,
				(i) -> TaskRequest.of(queue, i).delay(Duration.ofMillis((i % 2 == 0) ? 0 : 100 + i % 400)), sink));
		this.redis.deleteQueue(queue);
		logger.info(
				"Warm-up: " + this.tasks + " tasks, " + WorkloadResult.of("warmup", Map.of(), round.analysis()).line());
	}

}

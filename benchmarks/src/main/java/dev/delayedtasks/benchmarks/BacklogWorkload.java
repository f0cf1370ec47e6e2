package dev.delayedtasks.benchmarks;

import java.util.List;
import java.util.Map;

import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.QueueStats;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code backlog}: a large backlog due hours ahead, scheduled in {@code scheduleAll}
 * batches, then the {@link DelayedWorkload delayed round} on the same queue. Its lateness
 * should match the delayed workload's. A backlog task that ran or vanished counts as
 * lost.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(4)
class BacklogWorkload implements Workload {

	private final DelayedWorkload delayed;

	private final TaskProducer producer;

	private final RedisProbe redis;

	private final BenchmarkProperties.Backlog settings;

	BacklogWorkload(DelayedWorkload delayed, TaskProducer producer, RedisProbe redis, BenchmarkProperties properties) {
		this.delayed = delayed;
		this.producer = producer;
		this.redis = redis;
		this.settings = properties.backlog();
	}

	@Override
	public String name() {
		return "backlog";
	}

	@Override
	public List<WorkloadResult> run() {
		String queue = Queues.BACKLOG;
		Produced backlog = this.producer.inBatches(this.settings.tasks(), this.settings.batch(),
				(i) -> TaskRequest.of(queue, i).delay(this.settings.ahead()), EnqueueSink.NONE);
		Round round = this.delayed.measure(queue);
		QueueStats after = this.redis.stats(queue);
		long backlogLost = this.settings.tasks() - after.scheduled();
		this.redis.deleteQueue(queue);
		Map<String, Object> fields = WorkloadResult.fields("n", round.analysis().expected(), "concurrency",
				round.concurrency(), "backlog", this.settings.tasks(), "backlog_batch", this.settings.batch(),
				"backlog_enqueue_per_s", backlog.perSecond(), "enqueue_per_s", round.produced().perSecond());
		fields.putAll(round.analysis().afterEnqueueFields());
		WorkloadResult result = WorkloadResult.of(name(), fields, round.analysis());
		if (backlogLost != 0) {
			result = result.withField("lost", Long.parseLong(result.fields().get("lost")) + Math.abs(backlogLost));
		}
		return List.of(result);
	}

}

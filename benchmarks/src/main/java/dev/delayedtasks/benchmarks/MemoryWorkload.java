package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.ToLongFunction;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.QueueStats;
import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code memory}: bytes per task in Redis with a payload of a fixed JSON size, for
 * scheduled, ready and dead tasks. Two measures: the {@code used_memory} delta of
 * {@code INFO memory} over all tasks, and {@code MEMORY USAGE} of a sample of task keys
 * plus the task's share of its index.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(5)
class MemoryWorkload implements Workload {

	private static final int SAMPLE = 100;

	private static final Duration TIMEOUT = Duration.ofMinutes(2);

	private final Rounds rounds;

	private final TaskProducer producer;

	private final RedisProbe redis;

	private final BenchmarkProperties.Memory settings;

	MemoryWorkload(Rounds rounds, TaskProducer producer, RedisProbe redis, BenchmarkProperties properties) {
		this.rounds = rounds;
		this.producer = producer;
		this.redis = redis;
		this.settings = properties.memory();
	}

	@Override
	public String name() {
		return "memory";
	}

	@Override
	public List<WorkloadResult> run() {
		// A JSON string of exactly payloadBytes bytes, quotes included.
		String payload = "x".repeat(Math.max(0, this.settings.payloadBytes() - 2));
		Footprint scheduled = measure(State.SCHEDULED,
				(i) -> TaskRequest.of(Queues.MEMORY_SCHEDULED, payload).delay(Duration.ofHours(3)));
		Footprint ready = measure(State.READY, (i) -> TaskRequest.of(Queues.MEMORY_READY, payload));
		Footprint dead = measure(State.DEAD, (i) -> TaskRequest.of(Queues.MEMORY_DEAD, payload));
		int n = this.settings.tasks();
		long lost = 3L * n - scheduled.count() - ready.count() - dead.count();
		Map<String, Object> fields = WorkloadResult.fields("n", n, "payload_bytes", this.settings.payloadBytes(),
				"scheduled_bytes_per_task", scheduled.bytesPerTask(), "scheduled_overhead_bytes",
				scheduled.bytesPerTask() - this.settings.payloadBytes(), "scheduled_usage_per_task",
				scheduled.usagePerTask(), "ready_bytes_per_task", ready.bytesPerTask(), "ready_usage_per_task",
				ready.usagePerTask(), "dead_bytes_per_task", dead.bytesPerTask(), "dead_usage_per_task",
				dead.usagePerTask(), "hash_encoding", scheduled.encoding(), "task_key_bytes", scheduled.taskKeyBytes(),
				"early", (dead.analysis() != null) ? dead.analysis().early() : 0, "lost", lost, "dup",
				(dead.analysis() != null) ? dead.analysis().dup() : 0);
		return List.of(WorkloadResult.of(name(), fields, null));
	}

	private Footprint measure(State state, IntFunction<TaskRequest> requests) {
		String queue = state.queue;
		int n = this.settings.tasks();
		this.redis.deleteQueue(queue);
		long before = this.redis.usedMemory();
		List<TaskId> sample = new ArrayList<>();
		EnqueueSink sampling = (id, micros) -> {
			if (sample.size() < SAMPLE) {
				sample.add(id);
			}
		};
		Analysis analysis = null;
		if (state == State.DEAD) {
			analysis = this.rounds.measure(queue, TIMEOUT,
					(sink) -> this.producer.inBatches(n, this.settings.batch(), requests, (id, micros) -> {
						sink.enqueued(id, micros);
						sampling.enqueued(id, micros);
					}))
				.analysis();
		}
		else {
			this.producer.inBatches(n, this.settings.batch(), requests, sampling);
		}
		long after = this.redis.usedMemory();
		PartitionKeys keys = this.redis.keys(queue);
		long sampled = 0;
		for (TaskId id : sample) {
			sampled += this.redis.memoryUsage(keys.task(id.value())) + this.redis.memoryUsage(keys.payload(id.value()))
					+ this.redis.memoryUsage(keys.error(id.value()));
		}
		long usage = sampled / Math.max(1, sample.size()) + this.redis.memoryUsage(state.index.apply(keys)) / n;
		String taskKey = keys.task(sample.isEmpty() ? "" : sample.get(0).value());
		String encoding = this.redis.encoding(taskKey);
		long count = state.count.applyAsLong(this.redis.stats(queue));
		this.redis.deleteQueue(queue);
		return new Footprint((after - before) / n, usage, count, encoding, taskKey.length(), analysis);
	}

	/**
	 * The task states measured, with their queue, index key and count.
	 */
	private enum State {

		SCHEDULED(Queues.MEMORY_SCHEDULED, PartitionKeys::sched, QueueStats::scheduled),

		READY(Queues.MEMORY_READY, PartitionKeys::ready, QueueStats::ready),

		DEAD(Queues.MEMORY_DEAD, PartitionKeys::dead, QueueStats::dead);

		private final String queue;

		private final Function<PartitionKeys, String> index;

		private final ToLongFunction<QueueStats> count;

		State(String queue, Function<PartitionKeys, String> index, ToLongFunction<QueueStats> count) {
			this.queue = queue;
			this.index = index;
			this.count = count;
		}

	}

	/**
	 * What tasks in one state cost.
	 *
	 * @param bytesPerTask {@code used_memory} delta per task
	 * @param usagePerTask {@code MEMORY USAGE} of a task's keys plus its share of the
	 * index
	 * @param count tasks in that state afterwards
	 * @param encoding the encoding of a task hash
	 * @param taskKeyBytes the length of a task hash's key (prefix, queue and id)
	 * @param analysis the runs (dead tasks only)
	 */
	private record Footprint(long bytesPerTask, long usagePerTask, long count, String encoding, int taskKeyBytes,
			@Nullable Analysis analysis) {

	}

}

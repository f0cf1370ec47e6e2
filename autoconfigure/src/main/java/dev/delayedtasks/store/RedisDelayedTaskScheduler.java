package dev.delayedtasks.store;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.ToIntFunction;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.Names;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.TaskStoreException;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * {@link DelayedTaskScheduler} on Redis. Validates every request and serializes its
 * payload before writing anything, then sends one {@code enqueue} script call per queue
 * and batch.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisDelayedTaskScheduler implements DelayedTaskScheduler {

	private final StoreScripts scripts;

	private final StoreSettings settings;

	private final PayloadCodec codec;

	private final QueueIndex queues;

	private final ToIntFunction<String> defaultMaxAttempts;

	private final int batchSize;

	private final BiConsumer<String, ScheduleResult> onScheduled;

	/**
	 * Create a scheduler.
	 * @param scripts the scripts
	 * @param settings limits and durations
	 * @param codec the payload codec
	 * @param queues the queue index
	 * @param defaultMaxAttempts a queue's max attempts when a request sets none
	 * @param batchSize the most tasks per script call
	 * @param onScheduled called with the queue and the result of every request (for
	 * listeners)
	 */
	public RedisDelayedTaskScheduler(StoreScripts scripts, StoreSettings settings, PayloadCodec codec,
			QueueIndex queues, ToIntFunction<String> defaultMaxAttempts, int batchSize,
			BiConsumer<String, ScheduleResult> onScheduled) {
		this.scripts = scripts;
		this.settings = settings;
		this.codec = codec;
		this.queues = queues;
		this.defaultMaxAttempts = defaultMaxAttempts;
		this.batchSize = batchSize;
		this.onScheduled = onScheduled;
	}

	@Override
	public ScheduleResult submit(TaskRequest request) {
		PreparedTask task = PreparedTask.of(request, this.codec, this.defaultMaxAttempts);
		return enqueue(task.queue(), List.of(task)).get(0);
	}

	@Override
	public List<ScheduleResult> scheduleAll(Collection<TaskRequest> requests) {
		List<PreparedTask> prepared = requests.stream()
			.map((request) -> PreparedTask.of(request, this.codec, this.defaultMaxAttempts))
			.toList();
		Map<String, List<Integer>> positionsByQueue = new LinkedHashMap<>();
		for (int i = 0; i < prepared.size(); i++) {
			positionsByQueue.computeIfAbsent(prepared.get(i).queue(), (queue) -> new ArrayList<>()).add(i);
		}
		ScheduleResult[] results = new ScheduleResult[prepared.size()];
		positionsByQueue.forEach((queue, positions) -> {
			for (int from = 0; from < positions.size(); from += this.batchSize) {
				List<Integer> batch = positions.subList(from, Math.min(from + this.batchSize, positions.size()));
				List<ScheduleResult> outcomes = enqueue(queue, batch.stream().map(prepared::get).toList());
				for (int i = 0; i < batch.size(); i++) {
					results[batch.get(i)] = outcomes.get(i);
				}
			}
		});
		return Arrays.asList(results);
	}

	private List<ScheduleResult> enqueue(String queue, List<PreparedTask> tasks) {
		PartitionKeys keys = this.settings.keys(queue);
		List<String> keyList = new ArrayList<>(
				List.of(keys.sched(), keys.ready(), keys.wake(), keys.tick(), keys.stats(), keys.meta()));
		List<String> args = new ArrayList<>(List.of(Integer.toString(tasks.size()), LayoutVersion.CURRENT,
				Integer.toString(this.settings.fanoutBatch())));
		for (PreparedTask task : tasks) {
			String id = task.id().value();
			keyList.add(keys.task(id));
			keyList.add(keys.payload(id));
			keyList.add(keys.unique(task.uniqueDigest()));
			args.addAll(List.of(id, task.absolute() ? "A" : "D", Long.toString(task.time()),
					Integer.toString(task.maxAttempts()), Long.toString(task.uniqueTtlMs()), task.envelope()));
		}
		registerQueue(queue, tasks.get(0).id());
		Reply reply = new Reply(this.scripts.run(Script.ENQUEUE, keyList, args, queue, tasks.get(0).id().value()));
		if ("LAYOUT".equals(reply.text(1))) {
			throw LayoutVersion.mismatch(queue, reply.text(2));
		}
		List<ScheduleResult> results = new ArrayList<>(tasks.size());
		for (int i = 0; i < tasks.size(); i++) {
			int at = 1 + i * 3;
			ScheduleResult.Outcome outcome = switch (reply.code(at)) {
				case 'C' -> ScheduleResult.Outcome.CREATED;
				case 'E' -> ScheduleResult.Outcome.EXISTING;
				case 'U' -> ScheduleResult.Outcome.DUPLICATE;
				case 'K' -> throw new DelayedTaskException("Task " + tasks.get(i).id() + " of queue '" + queue
						+ "' was corrupt in Redis; it was moved to the dead letters, so schedule it with another id");
				default -> throw RedisTaskStore.unexpected(Script.ENQUEUE, reply);
			};
			results.add(new ScheduleResult(TaskId.of(reply.text(at + 1)), outcome,
					Instant.ofEpochMilli(reply.number(at + 2))));
		}
		results.forEach((result) -> this.onScheduled.accept(queue, result));
		return results;
	}

	private void registerQueue(String queue, TaskId id) {
		try {
			this.queues.register(queue);
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException(
					"Redis failed to register queue '" + queue + "' (task " + id + "): " + ex.getMessage(), id, ex);
		}
	}

	@Override
	public boolean cancel(String queue, TaskId id) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		String value = id.value();
		Reply reply = new Reply(this.scripts.run(Script.CANCEL,
				List.of(keys.sched(), keys.stats(), keys.task(value), keys.payload(value), keys.error(value)),
				List.of(keys.base(), value, RedisTaskStore.millis(this.settings.tombstoneTtl())), queue, value));
		return reply.code(1) == 'C';
	}

	@Override
	public boolean reschedule(String queue, TaskId id, Duration delay) {
		return reschedule(queue, id, delay, null);
	}

	@Override
	public boolean reschedule(String queue, TaskId id, Instant runAt) {
		return reschedule(queue, id, null, runAt);
	}

	private boolean reschedule(String queue, TaskId id, @Nullable Duration delay, @Nullable Instant runAt) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		long time = PreparedTask.dueArgument(queue, delay, runAt);
		String value = id.value();
		Reply reply = new Reply(this.scripts.run(Script.RESCHEDULE,
				List.of(keys.sched(), keys.ready(), keys.wake(), keys.tick(), keys.stats(), keys.task(value)),
				List.of(value, (runAt != null) ? "A" : "D", Long.toString(time),
						Integer.toString(this.settings.fanoutBatch())),
				queue, value));
		return reply.code(1) == 'O';
	}

	@Override
	public Optional<TaskInfo> find(String queue, TaskId id) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		try {
			Map<Object, Object> fields = this.scripts.template().opsForHash().entries(keys.task(id.value()));
			TaskState state = TaskRecords.state(fields.get("s"));
			if (state == null) {
				return Optional.empty();
			}
			String error = this.scripts.template().opsForValue().get(keys.error(id.value()));
			return Optional.of(new TaskInfo(id, queue, state, (int) TaskRecords.number(fields.get("a")),
					(int) TaskRecords.number(fields.get("v")), (int) TaskRecords.number(fields.get("m")),
					Instant.ofEpochMilli(TaskRecords.number(fields.get("d"))),
					Instant.ofEpochMilli(TaskRecords.number(fields.get("c"))), "1".equals(fields.get("cr")),
					TaskRecords.error(error)));
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException(
					"Redis failed to read task " + id + " of queue '" + queue + "': " + ex.getMessage(), id, ex);
		}
	}

}

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
import java.util.function.Function;
import java.util.function.ToIntFunction;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.Names;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.observation.DelayedTaskObservation;
import dev.delayedtasks.observation.DelayedTaskObservation.DefaultScheduleObservationConvention;
import dev.delayedtasks.observation.ScheduleObservationContext;
import dev.delayedtasks.observation.ScheduleObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.util.unit.DataSize;

/**
 * {@link DelayedTaskScheduler} on Redis. Validates every request and serializes its
 * payload before writing anything, then sends one {@code enqueue} script call per queue
 * and batch. A batch is bounded by task count and by envelope bytes, so no script call
 * holds Redis for long; envelopes beyond the first batch's worth are not kept after
 * validation but written again just before their batch is sent, so a large
 * {@code scheduleAll} holds about one batch in memory.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisDelayedTaskScheduler implements DelayedTaskScheduler {

	private static final DefaultScheduleObservationConvention DEFAULT_CONVENTION = new DefaultScheduleObservationConvention();

	/** The default bound of the envelope bytes one script call carries. */
	public static final DataSize DEFAULT_BATCH_BYTES = DataSize.ofMegabytes(1);

	private final StoreScripts scripts;

	private final StoreSettings settings;

	private final PayloadCodec codec;

	private final QueueIndex queues;

	private final ToIntFunction<String> defaultMaxAttempts;

	private final int batchSize;

	private final long batchBytes;

	private final DelayedTaskListener listener;

	private final ObservationRegistry observationRegistry;

	private final @Nullable ScheduleObservationConvention observationConvention;

	/**
	 * Create a scheduler.
	 * @param scripts the scripts
	 * @param settings limits and durations
	 * @param codec the payload codec
	 * @param queues the queue index
	 * @param defaultMaxAttempts a queue's max attempts when a request sets none
	 * @param batchSize the most tasks per script call
	 * @param listener told what was scheduled and cancelled
	 * @param observationRegistry observes scheduling ({@link ObservationRegistry#NOOP}
	 * for none)
	 * @param observationConvention a custom convention, or {@code null} for the default
	 */
	public RedisDelayedTaskScheduler(StoreScripts scripts, StoreSettings settings, PayloadCodec codec,
			QueueIndex queues, ToIntFunction<String> defaultMaxAttempts, int batchSize, DelayedTaskListener listener,
			ObservationRegistry observationRegistry, @Nullable ScheduleObservationConvention observationConvention) {
		this(scripts, settings, codec, queues, defaultMaxAttempts, batchSize, DEFAULT_BATCH_BYTES, listener,
				observationRegistry, observationConvention);
	}

	/**
	 * Create a scheduler.
	 * @param scripts the scripts
	 * @param settings limits and durations
	 * @param codec the payload codec
	 * @param queues the queue index
	 * @param defaultMaxAttempts a queue's max attempts when a request sets none
	 * @param batchSize the most tasks per script call
	 * @param batchBytes the most envelope bytes per script call (a larger task goes in a
	 * call of its own)
	 * @param listener told what was scheduled and cancelled
	 * @param observationRegistry observes scheduling ({@link ObservationRegistry#NOOP}
	 * for none)
	 * @param observationConvention a custom convention, or {@code null} for the default
	 */
	public RedisDelayedTaskScheduler(StoreScripts scripts, StoreSettings settings, PayloadCodec codec,
			QueueIndex queues, ToIntFunction<String> defaultMaxAttempts, int batchSize, DataSize batchBytes,
			DelayedTaskListener listener, ObservationRegistry observationRegistry,
			@Nullable ScheduleObservationConvention observationConvention) {
		this.scripts = scripts;
		this.settings = settings;
		this.codec = codec;
		this.queues = queues;
		this.defaultMaxAttempts = defaultMaxAttempts;
		this.batchSize = batchSize;
		this.batchBytes = batchBytes.toBytes();
		this.listener = listener;
		this.observationRegistry = observationRegistry;
		this.observationConvention = observationConvention;
	}

	@Override
	public ScheduleResult submit(TaskRequest request) {
		return observe(request.queue(), 1, (trace) -> {
			PreparedTask task = PreparedTask.of(withTrace(request, trace), this.codec, this.defaultMaxAttempts);
			return enqueue(task.queue(), List.of(task)).get(0);
		});
	}

	@Override
	public List<ScheduleResult> scheduleAll(Collection<TaskRequest> requests) {
		if (requests.isEmpty()) {
			return List.of();
		}
		return observe(requests.iterator().next().queue(), requests.size(), (trace) -> scheduleAll(requests, trace));
	}

	/**
	 * Run {@code work} in a {@link DelayedTaskObservation#SCHEDULE} observation and hand
	 * it the trace headers the observation's tracing handler wrote, so they travel with
	 * the tasks.
	 * @param <T> the type of the result
	 * @param queue the queue
	 * @param tasks how many tasks are scheduled
	 * @param work the scheduling, given the trace headers
	 * @return what {@code work} returns
	 */
	private <T> T observe(String queue, int tasks, Function<Map<String, String>, T> work) {
		ScheduleObservationContext context = new ScheduleObservationContext(queue, tasks);
		Observation observation = DelayedTaskObservation.SCHEDULE.observation(this.observationConvention,
				DEFAULT_CONVENTION, () -> context, this.observationRegistry);
		return observation.observe(() -> work.apply(context.propagatedHeaders()));
	}

	private static TaskRequest withTrace(TaskRequest request, Map<String, String> trace) {
		TaskRequest traced = request;
		for (Map.Entry<String, String> header : trace.entrySet()) {
			if (!request.headers().containsKey(header.getKey())) {
				traced = traced.header(header.getKey(), header.getValue());
			}
		}
		return traced;
	}

	private List<ScheduleResult> scheduleAll(Collection<TaskRequest> requests, Map<String, String> trace) {
		// Every request is validated (and its envelope written and measured) before
		// anything is sent; only the first batch's worth of envelopes is kept.
		List<PreparedTask> prepared = new ArrayList<>(requests.size());
		long kept = 0;
		for (TaskRequest request : requests) {
			PreparedTask task = PreparedTask.of(withTrace(request, trace), this.codec, this.defaultMaxAttempts);
			if (kept + task.envelopeBytes() <= this.batchBytes) {
				kept += task.envelopeBytes();
			}
			else {
				task = task.withoutEnvelope();
			}
			prepared.add(task);
		}
		Map<String, List<Integer>> positionsByQueue = new LinkedHashMap<>();
		for (int i = 0; i < prepared.size(); i++) {
			positionsByQueue.computeIfAbsent(prepared.get(i).queue(), (queue) -> new ArrayList<>()).add(i);
		}
		ScheduleResult[] results = new ScheduleResult[prepared.size()];
		positionsByQueue.forEach((queue, positions) -> {
			int from = 0;
			while (from < positions.size()) {
				int to = batchEnd(prepared, positions, from);
				List<Integer> batch = positions.subList(from, to);
				List<ScheduleResult> outcomes = enqueue(queue, batch.stream().map(prepared::get).toList());
				for (int i = 0; i < batch.size(); i++) {
					results[batch.get(i)] = outcomes.get(i);
					// Done with it: its envelope, if kept, can go.
					prepared.set(batch.get(i), null);
				}
				from = to;
			}
		});
		return Arrays.asList(results);
	}

	/**
	 * The end (exclusive) of the batch that starts at {@code from}: at most
	 * {@code batchSize} tasks and {@code batchBytes} of envelopes, and at least one task.
	 * @param prepared the prepared tasks
	 * @param positions the order to send them in, as positions in {@code prepared}
	 * @param from where the batch starts in {@code positions}
	 * @return where the batch ends in {@code positions}
	 */
	private int batchEnd(List<PreparedTask> prepared, List<Integer> positions, int from) {
		int to = from;
		long bytes = 0;
		while (to < positions.size() && to - from < this.batchSize) {
			int size = prepared.get(positions.get(to)).envelopeBytes();
			if (to > from && bytes + size > this.batchBytes) {
				break;
			}
			bytes += size;
			to++;
		}
		return to;
	}

	private List<ScheduleResult> enqueue(String queue, List<PreparedTask> tasks) {
		PartitionKeys keys = this.settings.keys(queue);
		List<String> keyList = new ArrayList<>(
				List.of(keys.sched(), keys.ready(), keys.wake(), keys.tick(), keys.stats(), keys.meta()));
		List<String> args = new ArrayList<>(List.of(keys.base(), Integer.toString(tasks.size()), LayoutVersion.CURRENT,
				Integer.toString(this.settings.fanoutBatch())));
		for (PreparedTask task : tasks) {
			String id = task.id().value();
			keyList.add(keys.task(id));
			keyList.add(keys.payload(id));
			keyList.add(keys.unique(task.uniqueDigest()));
			args.addAll(List.of(id, task.absolute() ? "A" : "D", Long.toString(task.time()),
					Integer.toString(task.maxAttempts()), Long.toString(task.uniqueTtlMs()),
					task.envelope(this.codec)));
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
		results.forEach((result) -> this.listener.scheduled(queue, result));
		return results;
	}

	private void registerQueue(String queue, TaskId id) {
		try {
			this.queues.register(queue);
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException(
					"Redis failed to register queue '" + queue + "' (task " + id + "): " + StoreScripts.reason(ex), id,
					ex);
		}
	}

	@Override
	public boolean cancel(String queue, TaskId id) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		String value = id.value();
		Reply reply = new Reply(this.scripts.run(Script.CANCEL,
				List.of(keys.sched(), keys.stats(), keys.task(value), keys.payload(value), keys.error(value)),
				List.of(keys.base(), value, RedisTaskStore.millis(this.settings.tombstoneTtl())), queue, value));
		boolean cancelled = reply.code(1) == 'C';
		if (cancelled) {
			this.listener.cancelled(queue, id);
		}
		return cancelled;
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
				List.of(keys.base(), value, (runAt != null) ? "A" : "D", Long.toString(time),
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

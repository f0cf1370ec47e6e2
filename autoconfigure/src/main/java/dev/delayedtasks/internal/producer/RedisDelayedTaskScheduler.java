package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.Names;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskQueue;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.internal.admin.RedisQueueControl;
import dev.delayedtasks.internal.store.EnqueueCall;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.PreparedTask;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskRecords;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.ReactiveStoreScripts;
import dev.delayedtasks.internal.store.script.Reply;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.internal.tracking.OutcomeRecords;
import dev.delayedtasks.internal.tracking.OutcomeTracker;
import dev.delayedtasks.observation.ScheduleObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
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

	private static final Log logger = LogFactory.getLog(RedisDelayedTaskScheduler.class);

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

	private final ScheduleObservations observations;

	private final EnqueueCall enqueueCall;

	private final EnqueueCoalescer coalescer;

	private final @Nullable AsyncScheduling async;

	private final QueueDeclarations declarations;

	private final AfterCommitSends afterCommit;

	private final Function<String, Duration> resultsRetention;

	private final @Nullable OutcomeTracker tracker;

	private final OutcomeRecords outcomes;

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
		this(scripts, settings, codec, queues, defaultMaxAttempts, batchSize, batchBytes, listener, observationRegistry,
				observationConvention, QueueDeclarations.acceptAll(), false, null, OutageBuffer.DISABLED,
				(queue) -> Duration.ZERO, null);
	}

	/**
	 * Create a scheduler whose {@code ...Async} methods run on the reactive connection,
	 * for every queue and without waiting for transactions.
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
	 * @param reactiveScripts the scripts on the reactive connection, or {@code null} to
	 * run the {@code ...Async} methods on the calling thread
	 */
	public RedisDelayedTaskScheduler(StoreScripts scripts, StoreSettings settings, PayloadCodec codec,
			QueueIndex queues, ToIntFunction<String> defaultMaxAttempts, int batchSize, DataSize batchBytes,
			DelayedTaskListener listener, ObservationRegistry observationRegistry,
			@Nullable ScheduleObservationConvention observationConvention,
			@Nullable ReactiveStoreScripts reactiveScripts) {
		this(scripts, settings, codec, queues, defaultMaxAttempts, batchSize, batchBytes, listener, observationRegistry,
				observationConvention, QueueDeclarations.acceptAll(), false, reactiveScripts, OutageBuffer.DISABLED,
				(queue) -> Duration.ZERO, null);
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
	 * @param declarations the queues this application knows
	 * @param afterCommitByDefault whether requests that do not say otherwise wait for the
	 * commit of the caller's transaction
	 * @param reactiveScripts the scripts on the reactive connection, or {@code null} to
	 * run the {@code ...Async} methods on the calling thread
	 * @param outageBuffer whether and how the {@code ...Async} calls that store one task
	 * hold it while Redis is unreachable (only with {@code reactiveScripts})
	 * @param resultsRetention how long the outcome of a queue's tasks is kept, zero for
	 * not at all
	 * @param tracker tracks tasks for {@link #track(TaskRequest)} and
	 * {@link #awaitOutcome(String, TaskId, Duration)}, or {@code null} when they are not
	 * offered
	 */
	public RedisDelayedTaskScheduler(StoreScripts scripts, StoreSettings settings, PayloadCodec codec,
			QueueIndex queues, ToIntFunction<String> defaultMaxAttempts, int batchSize, DataSize batchBytes,
			DelayedTaskListener listener, ObservationRegistry observationRegistry,
			@Nullable ScheduleObservationConvention observationConvention, QueueDeclarations declarations,
			boolean afterCommitByDefault, @Nullable ReactiveStoreScripts reactiveScripts, OutageBuffer outageBuffer,
			Function<String, Duration> resultsRetention, @Nullable OutcomeTracker tracker) {
		this.scripts = scripts;
		this.settings = settings;
		this.codec = codec;
		this.queues = queues;
		this.defaultMaxAttempts = defaultMaxAttempts;
		this.batchSize = batchSize;
		this.batchBytes = batchBytes.toBytes();
		this.listener = listener;
		this.observations = new ScheduleObservations(observationRegistry, observationConvention);
		this.enqueueCall = new EnqueueCall(settings, codec);
		this.coalescer = new EnqueueCoalescer(this::send, batchSize, this.batchBytes);
		this.async = (reactiveScripts != null) ? new AsyncScheduling(reactiveScripts, settings, codec, queues,
				defaultMaxAttempts, batchSize, this.batchBytes, listener, this.enqueueCall, outageBuffer) : null;
		this.declarations = declarations;
		this.afterCommit = new AfterCommitSends(afterCommitByDefault, this::sendEach, listener, (queue, id, reason) -> {
			if (tracker != null) {
				tracker.forget(queue, id, reason);
			}
		});
		this.resultsRetention = resultsRetention;
		this.tracker = tracker;
		this.outcomes = new OutcomeRecords(scripts, settings, codec);
	}

	/**
	 * Tasks that the {@code ...Async} calls storing one task accepted and have not stored
	 * yet: in a call in flight, waiting for the next call of their queue, or held while
	 * Redis is unreachable ({@link OutageBuffer}).
	 * @return the count, 0 when those calls run on the calling thread
	 */
	public int bufferedTasks() {
		AsyncScheduling async = this.async;
		return (async != null) ? async.accepted() : 0;
	}

	@Override
	public ScheduleResult submit(TaskRequest request) {
		return this.observations.observe(request.queue(), 1, (trace) -> {
			PreparedTask task = prepare(request, trace);
			if (this.afterCommit.defers(request)) {
				return this.afterCommit.defer(task);
			}
			ScheduleResult result = this.coalescer.submit(task);
			this.listener.scheduled(task.queue(), result);
			return result;
		});
	}

	@Override
	public List<ScheduleResult> scheduleAll(Collection<TaskRequest> requests) {
		if (requests.isEmpty()) {
			return List.of();
		}
		return this.observations.observe(requests.iterator().next().queue(), requests.size(),
				(trace) -> scheduleAll(requests, trace));
	}

	/**
	 * Validate a request, serialize its payload and check its queue; nothing is written.
	 * @param request the request
	 * @param trace the trace headers to add
	 * @return the task
	 */
	private PreparedTask prepare(TaskRequest request, Map<String, String> trace) {
		PreparedTask task = PreparedTask.of(ScheduleObservations.withTrace(request, trace), this.codec,
				this.defaultMaxAttempts);
		this.declarations.check(task.queue());
		Duration keep = this.resultsRetention.apply(task.queue());
		return (keep.isZero()) ? task : task.withOutcome(keep, null);
	}

	@Override
	public TrackedTask track(TaskRequest request) {
		OutcomeTracker tracker = tracker();
		return this.observations.observeTracking(request.queue(), () -> trackObserved(request, tracker));
	}

	private TrackedTask trackObserved(TaskRequest request, OutcomeTracker tracker) {
		return this.observations.observe(request.queue(), 1, (trace) -> {
			PreparedTask prepared = prepare(request, trace);
			Duration keep = trackedRetention(prepared.queue(), tracker);
			PreparedTask task = prepared.withOutcome(keep, tracker.channel());
			String queue = task.queue();
			CompletableFuture<TaskOutcome> outcome = tracker.expect(queue, task.id());
			ScheduleResult result;
			try {
				if (this.afterCommit.defers(request)) {
					result = this.afterCommit.defer(task);
				}
				else {
					result = this.coalescer.submit(task);
					this.listener.scheduled(queue, result);
				}
			}
			catch (RuntimeException ex) {
				tracker.forget(queue, task.id(), ex);
				throw ex;
			}
			if (result.outcome() == ScheduleResult.Outcome.CREATED
					|| result.outcome() == ScheduleResult.Outcome.PENDING) {
				return new TrackedTask(queue, result, outcome);
			}
			// An existing task (the enqueue named this tracker if it is live), or the
			// holder of the unique key: tracked the same way as awaitOutcome tracks one.
			if (!result.id().equals(task.id())) {
				tracker.forget(queue, task.id(), new IllegalStateException("a duplicate of " + result.id()));
				outcome = tracker.expect(queue, result.id());
			}
			trackExisting(queue, result.id(), keep, tracker);
			return new TrackedTask(queue, result, outcome);
		});
	}

	@Override
	public Optional<TaskOutcome> outcome(String queue, TaskId id) {
		return this.outcomes.read(Names.checkQueue(queue), id);
	}

	@Override
	public Optional<TaskOutcome> awaitOutcome(String queue, TaskId id, Duration timeout) {
		OutcomeTracker tracker = tracker();
		String checked = Names.checkQueue(queue);
		CompletableFuture<TaskOutcome> outcome = tracker.expect(checked, id);
		if (!trackExisting(checked, id, trackedRetention(checked, tracker), tracker)) {
			return Optional.empty();
		}
		return new TrackedTask(checked, new ScheduleResult(id, ScheduleResult.Outcome.EXISTING, null), outcome)
			.await(timeout);
	}

	/**
	 * Name this tracker on a task that exists already, or read how it ended.
	 * @param queue the queue
	 * @param id the task
	 * @param keep how long its outcome is kept at least
	 * @param tracker the tracker
	 * @return whether an outcome is to be had: the task is live, or its record is there
	 */
	private boolean trackExisting(String queue, TaskId id, Duration keep, OutcomeTracker tracker) {
		char state;
		try {
			state = this.outcomes.track(queue, id, keep, tracker.channel());
		}
		catch (RuntimeException ex) {
			tracker.forget(queue, id, ex);
			throw ex;
		}
		if (state == 'O') {
			tracker.check(queue, id);
		}
		else if (state == 'N') {
			tracker.forget(queue, id, new TaskStoreException(
					"Task " + id + " of queue '" + queue + "' does not exist, or ended without keeping its outcome", id,
					null));
			return false;
		}
		return true;
	}

	private Duration trackedRetention(String queue, OutcomeTracker tracker) {
		Duration retention = this.resultsRetention.apply(queue);
		return (retention.compareTo(tracker.maxWait()) > 0) ? retention : tracker.maxWait();
	}

	private OutcomeTracker tracker() {
		OutcomeTracker tracker = this.tracker;
		if (tracker == null) {
			throw new IllegalStateException(
					"Tracking needs the outcome tracker, which this scheduler was built without");
		}
		return tracker;
	}

	private List<ScheduleResult> scheduleAll(Collection<TaskRequest> requests, Map<String, String> trace) {
		// Every request is validated (and its envelope written and measured) before
		// anything is sent; only the first batch's worth of envelopes is kept.
		List<PreparedTask> prepared = new ArrayList<>(requests.size());
		ScheduleResult[] results = new ScheduleResult[requests.size()];
		List<PreparedTask> deferred = new ArrayList<>();
		long kept = 0;
		for (TaskRequest request : requests) {
			PreparedTask task = prepare(request, trace);
			if (this.afterCommit.defers(request)) {
				// Kept whole until the commit, envelope and all.
				results[prepared.size()] = ScheduleResult.pending(task.id());
				deferred.add(task);
				prepared.add(null);
				continue;
			}
			if (kept + task.envelopeBytes() <= this.batchBytes) {
				kept += task.envelopeBytes();
			}
			else {
				task = task.withoutEnvelope();
			}
			prepared.add(task);
		}
		sendBatches(prepared, results, null);
		// Only once the others are stored: a failure above throws, and the transaction
		// that the caller's exception rolls back would drop these anyway.
		deferred.forEach(this.afterCommit::defer);
		return Arrays.asList(results);
	}

	/**
	 * Send tasks in batches of one queue each, in order within a queue.
	 * @param prepared the tasks; {@code null} for positions to skip; each position is set
	 * to {@code null} once sent, so its envelope can go
	 * @param results where the outcome of each sent task goes, by position
	 * @param onFailure told about a batch that fails, after which the others are sent;
	 * {@code null} to throw the first failure
	 */
	private void sendBatches(List<@Nullable PreparedTask> prepared, @Nullable ScheduleResult[] results,
			AfterCommitSends.@Nullable BatchFailure onFailure) {
		Map<String, List<Integer>> positionsByQueue = new LinkedHashMap<>();
		for (int i = 0; i < prepared.size(); i++) {
			PreparedTask task = prepared.get(i);
			if (task != null) {
				positionsByQueue.computeIfAbsent(task.queue(), (queue) -> new ArrayList<>()).add(i);
			}
		}
		positionsByQueue.forEach((queue, positions) -> {
			int from = 0;
			while (from < positions.size()) {
				int to = batchEnd(prepared, positions, from);
				List<Integer> batch = positions.subList(from, to);
				List<PreparedTask> tasks = batch.stream().map(prepared::get).toList();
				List<ScheduleResult> outcomes;
				try {
					outcomes = enqueue(queue, tasks);
				}
				catch (RuntimeException ex) {
					if (onFailure == null) {
						throw ex;
					}
					onFailure.failed(queue, tasks, ex);
					outcomes = null;
				}
				for (int i = 0; i < batch.size(); i++) {
					if (outcomes != null) {
						results[batch.get(i)] = outcomes.get(i);
					}
					// Done with it: its envelope, if kept, can go.
					prepared.set(batch.get(i), null);
				}
				from = to;
			}
		});
	}

	/**
	 * Send tasks that waited for a commit, going on after a batch that fails.
	 * @param tasks the tasks
	 * @param onFailure told about each batch that fails
	 */
	private void sendEach(List<PreparedTask> tasks, AfterCommitSends.BatchFailure onFailure) {
		sendBatches(new ArrayList<>(tasks), new ScheduleResult[tasks.size()], onFailure);
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
		List<ScheduleResult> results = new ArrayList<>(tasks.size());
		for (EnqueueCall.Outcome outcome : send(queue, tasks)) {
			results.add(outcome.get());
		}
		results.forEach((result) -> this.listener.scheduled(queue, result));
		return results;
	}

	/**
	 * One {@code enqueue} call on the blocking connection.
	 * @param queue the queue
	 * @param tasks its tasks
	 * @return one outcome per task
	 */
	private List<EnqueueCall.Outcome> send(String queue, List<PreparedTask> tasks) {
		registerQueue(queue, tasks.get(0).id());
		List<Object> reply = this.scripts.runEncoded(Script.ENQUEUE, EnqueueCall.keyCount(tasks.size()),
				this.enqueueCall.encode(queue, tasks), queue, tasks.get(0).id().value());
		List<EnqueueCall.Outcome> outcomes = this.enqueueCall.outcomes(queue, tasks, reply);
		if (EnqueueCall.fresh(reply)) {
			// After the write: a removal of the queue from the index that ran before it
			// cannot undo this one.
			registerAgain(queue, tasks.get(0).id());
		}
		return outcomes;
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

	/**
	 * Add the queue to the index after the enqueue script found its partition new or
	 * removed: the queue may have been removed from the index after this process
	 * registered it, and this write, after the script, cannot be undone by that removal
	 * ({@link RedisQueueControl#remove(String)}). The tasks are stored by now, so a
	 * failure here is logged, not thrown: the queue is registered again on its next
	 * schedule.
	 * @param queue the queue
	 * @param id a task just stored, for the log
	 */
	private void registerAgain(String queue, TaskId id) {
		try {
			this.queues.registerAgain(queue);
		}
		catch (DataAccessException ex) {
			logger.warn("Task " + id + " was stored, but Redis failed to add queue '" + queue
					+ "' to the index of known queues; it is added on the next schedule: " + StoreScripts.reason(ex));
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
		// Both may exist when the id was scheduled before. A held task was never stored,
		// so it is not counted as a cancelled one.
		boolean held = this.afterCommit.cancel(queue, id);
		return cancelled || held;
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
		boolean moved = reply.code(1) == 'O';
		// After Redis answered: a failed call leaves the held task as it was.
		return this.afterCommit.reschedule(queue, id, runAt != null, time) || moved;
	}

	@Override
	public <T> TaskQueue<T> queue(String queue, Class<T> payloadType) {
		return TaskQueue.of(this, queue, payloadType, this.declarations::checkPayloadType);
	}

	@Override
	public Optional<TaskInfo> find(String queue, TaskId id) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		try {
			Map<Object, Object> fields = this.scripts.template().opsForHash().entries(keys.task(id.value()));
			if (TaskRecords.state(fields.get("s")) == null) {
				return Optional.empty();
			}
			String error = this.scripts.template().opsForValue().get(keys.error(id.value()));
			return Optional.ofNullable(taskInfo(queue, id, fields, error));
		}
		catch (DataAccessException ex) {
			throw readFailure(queue, id, ex);
		}
	}

	static @Nullable TaskInfo taskInfo(String queue, TaskId id, Map<?, ?> fields, @Nullable String error) {
		TaskState state = TaskRecords.state(fields.get("s"));
		if (state == null) {
			return null;
		}
		return new TaskInfo(id, queue, state, (int) TaskRecords.number(fields.get("a")),
				(int) TaskRecords.number(fields.get("v")), (int) TaskRecords.number(fields.get("m")),
				Instant.ofEpochMilli(TaskRecords.number(fields.get("d"))),
				Instant.ofEpochMilli(TaskRecords.number(fields.get("c"))), "1".equals(fields.get("cr")),
				TaskRecords.error(error),
				(fields.get("xa") != null) ? Instant.ofEpochMilli(TaskRecords.number(fields.get("xa"))) : null);
	}

	static TaskStoreException readFailure(String queue, TaskId id, Throwable ex) {
		return new TaskStoreException(
				"Redis failed to read task " + id + " of queue '" + queue + "': " + ex.getMessage(), id, ex);
	}

	// The non-blocking API: validated here, on the calling thread, and sent on the
	// reactive connection (AsyncScheduling). Without one, the interface's defaults run
	// the blocking methods on the calling thread.

	@Override
	public CompletableFuture<ScheduleResult> submitAsync(TaskRequest request) {
		AsyncScheduling async = this.async;
		if (async == null) {
			return DelayedTaskScheduler.super.submitAsync(request);
		}
		return this.observations.observeAsync(request.queue(), 1, (trace) -> {
			PreparedTask task = prepare(request, trace);
			if (this.afterCommit.defers(request)) {
				// Held on this thread, whose transaction decides: sent after its commit.
				return CompletableFuture.completedFuture(this.afterCommit.defer(task));
			}
			return async.submit(task);
		});
	}

	@Override
	public CompletableFuture<List<ScheduleResult>> scheduleAllAsync(Collection<TaskRequest> requests) {
		AsyncScheduling async = this.async;
		if (async == null) {
			return DelayedTaskScheduler.super.scheduleAllAsync(requests);
		}
		if (requests.isEmpty()) {
			return CompletableFuture.completedFuture(List.of());
		}
		return this.observations.observeAsync(requests.iterator().next().queue(), requests.size(), (trace) -> {
			// Every request is validated before anything is sent or held.
			List<PreparedTask> prepared = new ArrayList<>(requests.size());
			List<Boolean> held = new ArrayList<>(requests.size());
			for (TaskRequest request : requests) {
				prepared.add(prepare(request, trace));
				held.add(this.afterCommit.defers(request));
			}
			List<PreparedTask> now = new ArrayList<>();
			for (int i = 0; i < prepared.size(); i++) {
				if (held.get(i)) {
					// On this thread, whose transaction synchronization holds them;
					// unlike
					// the blocking scheduleAll, before the others are stored: the reply
					// comes on another thread. A failed send of the others fails the
					// future, and the caller decides whether its transaction commits.
					this.afterCommit.defer(prepared.get(i));
				}
				else {
					now.add(prepared.get(i));
				}
			}
			if (now.size() == prepared.size()) {
				return async.scheduleAll(prepared);
			}
			return async.scheduleAll(now).thenApply((sent) -> {
				List<ScheduleResult> results = new ArrayList<>(prepared.size());
				int next = 0;
				for (int i = 0; i < prepared.size(); i++) {
					results.add(held.get(i) ? ScheduleResult.pending(prepared.get(i).id()) : sent.get(next++));
				}
				return results;
			});
		});
	}

	@Override
	public CompletableFuture<Boolean> cancelAsync(String queue, TaskId id) {
		AsyncScheduling async = this.async;
		if (async == null) {
			return DelayedTaskScheduler.super.cancelAsync(queue, id);
		}
		if (holdsForCommit(queue, id)) {
			return failIfInvalid(() -> CompletableFuture.completedFuture(cancel(queue, id)));
		}
		return failIfInvalid(() -> async.cancel(Names.checkQueue(queue), id));
	}

	@Override
	public CompletableFuture<Boolean> rescheduleAsync(String queue, TaskId id, Duration delay) {
		AsyncScheduling async = this.async;
		if (async == null) {
			return DelayedTaskScheduler.super.rescheduleAsync(queue, id, delay);
		}
		if (holdsForCommit(queue, id)) {
			return failIfInvalid(() -> CompletableFuture.completedFuture(reschedule(queue, id, delay)));
		}
		return failIfInvalid(() -> async.reschedule(Names.checkQueue(queue), id, delay, null));
	}

	@Override
	public CompletableFuture<Boolean> rescheduleAsync(String queue, TaskId id, Instant runAt) {
		AsyncScheduling async = this.async;
		if (async == null) {
			return DelayedTaskScheduler.super.rescheduleAsync(queue, id, runAt);
		}
		if (holdsForCommit(queue, id)) {
			return failIfInvalid(() -> CompletableFuture.completedFuture(reschedule(queue, id, runAt)));
		}
		return failIfInvalid(() -> async.reschedule(Names.checkQueue(queue), id, null, runAt));
	}

	@Override
	public CompletableFuture<Optional<TaskInfo>> findAsync(String queue, TaskId id) {
		AsyncScheduling async = this.async;
		if (async == null) {
			return DelayedTaskScheduler.super.findAsync(queue, id);
		}
		return failIfInvalid(() -> async.find(Names.checkQueue(queue), id));
	}

	/**
	 * Whether this thread's transaction holds the task for its commit: its change is then
	 * made by the blocking method on this thread, since the held tasks belong to the
	 * thread of the transaction, and changed only after Redis answered.
	 * @param queue the queue
	 * @param id the task
	 * @return whether the calling thread's transaction holds it
	 */
	private boolean holdsForCommit(String queue, TaskId id) {
		return this.afterCommit.holds(queue, id);
	}

	private static <T> CompletableFuture<T> failIfInvalid(Supplier<CompletableFuture<T>> call) {
		return ScheduleObservations.failIfInvalid(call);
	}

}

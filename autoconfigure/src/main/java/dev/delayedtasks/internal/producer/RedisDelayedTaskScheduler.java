package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
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
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.internal.store.EnqueueCall;
import dev.delayedtasks.internal.store.PreparedTask;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskHandoffs;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.ReactiveStoreScripts;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.internal.tracking.OutcomeRecords;
import dev.delayedtasks.internal.tracking.OutcomeTracker;
import dev.delayedtasks.internal.tracking.TaskTracking;
import dev.delayedtasks.observation.ScheduleObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

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

	/** The default bound of the envelope bytes one script call carries. */
	public static final DataSize DEFAULT_BATCH_BYTES = DataSize.ofMegabytes(1);

	private final PayloadCodec codec;

	private final ToIntFunction<String> defaultMaxAttempts;

	private final long batchBytes;

	private final DelayedTaskListener listener;

	private final ScheduleObservations observations;

	private final BlockingEnqueue sender;

	private final EnqueueCoalescer coalescer;

	private final StoredTasks stored;

	private final @Nullable AsyncRequests async;

	private final QueueDeclarations declarations;

	private final AfterCommitSends afterCommit;

	private final TaskTracking tracking;

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
		this(scripts, settings, codec, queues, defaultMaxAttempts, batchSize, batchBytes, listener, observationRegistry,
				observationConvention, declarations, afterCommitByDefault, reactiveScripts, outageBuffer,
				resultsRetention, tracker, new TaskHandoffs());
	}

	/**
	 * Create a scheduler that hands the ready tasks it creates to idle dispatchers of
	 * this process.
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
	 * @param handoffs the dispatchers of this process that take ready tasks from the
	 * blocking calls that create them
	 */
	public RedisDelayedTaskScheduler(StoreScripts scripts, StoreSettings settings, PayloadCodec codec,
			QueueIndex queues, ToIntFunction<String> defaultMaxAttempts, int batchSize, DataSize batchBytes,
			DelayedTaskListener listener, ObservationRegistry observationRegistry,
			@Nullable ScheduleObservationConvention observationConvention, QueueDeclarations declarations,
			boolean afterCommitByDefault, @Nullable ReactiveStoreScripts reactiveScripts, OutageBuffer outageBuffer,
			Function<String, Duration> resultsRetention, @Nullable OutcomeTracker tracker, TaskHandoffs handoffs) {
		this.codec = codec;
		this.defaultMaxAttempts = defaultMaxAttempts;
		this.batchBytes = batchBytes.toBytes();
		this.listener = listener;
		this.observations = new ScheduleObservations(observationRegistry, observationConvention);
		EnqueueCall enqueueCall = new EnqueueCall(settings, codec);
		this.sender = new BlockingEnqueue(scripts, queues, enqueueCall, listener, batchSize, this.batchBytes, handoffs);
		this.coalescer = new EnqueueCoalescer(this.sender::send, batchSize, this.batchBytes);
		this.stored = new StoredTasks(scripts, settings);
		this.declarations = declarations;
		this.tracking = new TaskTracking(tracker, new OutcomeRecords(scripts, settings, codec), resultsRetention);
		this.afterCommit = new AfterCommitSends(afterCommitByDefault, this::sendCommitted, listener,
				this.tracking::forget);
		this.async = (reactiveScripts != null) ? new AsyncRequests(
				new AsyncScheduling(reactiveScripts, settings, codec, queues, defaultMaxAttempts, batchSize,
						this.batchBytes, listener, enqueueCall, outageBuffer),
				this.afterCommit, this.observations, this::prepare, this) : null;
	}

	/**
	 * Tasks that the {@code ...Async} calls storing one task accepted and have not stored
	 * yet: in a call in flight, waiting for the next call of their queue, or held while
	 * Redis is unreachable ({@link OutageBuffer}).
	 * @return the count, 0 when those calls run on the calling thread
	 */
	public int bufferedTasks() {
		AsyncRequests async = this.async;
		return (async != null) ? async.accepted() : 0;
	}

	/**
	 * Stop: the tasks the {@code ...Async} calls accepted get the outage buffer's
	 * {@code shutdownWait} to be stored; each one left then fails its call and is
	 * reported with its id ({@link DelayedTaskListener#storeAbandoned}). Called by
	 * {@link ProducerLifecycle} when the application stops, after the web server and the
	 * workers, before the connection factory; again, doing nothing more, when the context
	 * destroys the bean.
	 */
	public void close() {
		AsyncRequests async = this.async;
		if (async != null) {
			async.close();
		}
	}

	/**
	 * Send the tasks a transaction held, once it committed; a tracked one that Redis
	 * answered with another task (its id exists, or its unique key is held) tracks that
	 * task, as outside a transaction.
	 * @param tasks the tasks
	 * @param onFailure told about each batch that fails
	 */
	private void sendCommitted(List<PreparedTask> tasks, AfterCommitSends.BatchFailure onFailure) {
		@Nullable ScheduleResult[] results = this.sender.sendEach(tasks, onFailure);
		for (int i = 0; i < results.length; i++) {
			ScheduleResult result = results[i];
			if (result != null && tasks.get(i).tracked()) {
				this.tracking.sent(tasks.get(i), result);
			}
		}
	}

	@Override
	public ScheduleResult submit(TaskRequest request) {
		return this.observations.observe(request.queue(), 1, (trace) -> send(request, prepare(request, trace)));
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
		Duration keep = this.tracking.retention(task.queue());
		return (keep.isZero()) ? task : task.withOutcome(keep, null);
	}

	@Override
	public TrackedTask track(TaskRequest request) {
		// Before any observation: a scheduler without a tracker refuses at once.
		this.tracking.tracker();
		return this.observations.observeTracking(request.queue(), () -> this.observations.observe(request.queue(), 1,
				(trace) -> this.tracking.track(prepare(request, trace), (task) -> send(request, task))));
	}

	/**
	 * Store a prepared task now, or hold it for the commit of the caller's transaction.
	 * @param request the request it was prepared from
	 * @param task the task
	 * @return its result
	 */
	private ScheduleResult send(TaskRequest request, PreparedTask task) {
		if (this.afterCommit.defers(request)) {
			return this.afterCommit.defer(task);
		}
		ScheduleResult result = this.coalescer.submit(task);
		this.listener.scheduled(task.queue(), result);
		return result;
	}

	@Override
	public Optional<TaskOutcome> outcome(String queue, TaskId id) {
		return this.tracking.outcome(queue, id);
	}

	@Override
	public Optional<TaskOutcome> awaitOutcome(String queue, TaskId id, Duration timeout) {
		return this.tracking.awaitOutcome(queue, id, timeout);
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
		this.sender.sendBatches(prepared, results, null);
		// Only once the others are stored: a failure above throws, and the transaction
		// that the caller's exception rolls back would drop these anyway.
		deferred.forEach(this.afterCommit::defer);
		return Arrays.asList(results);
	}

	@Override
	public boolean cancel(String queue, TaskId id) {
		String checked = Names.checkQueue(queue);
		AsyncRequests async = this.async;
		// A task an asynchronous call still holds is withdrawn here, and cancelled in
		// Redis after the calls that may have carried it.
		boolean withdrawn = async != null && async.withdraw(checked, id);
		boolean cancelled = !withdrawn && this.stored.cancel(checked, id);
		if (cancelled) {
			this.listener.cancelled(queue, id);
		}
		// Both may exist when the id was scheduled before. A held task was never stored,
		// so it is not counted as a cancelled one.
		boolean held = this.afterCommit.cancel(queue, id);
		return withdrawn || cancelled || held;
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
		String checked = Names.checkQueue(queue);
		long time = PreparedTask.dueArgument(checked, delay, runAt);
		boolean moved = this.stored.reschedule(checked, id, delay, runAt);
		// After Redis answered: a failed call leaves the held task as it was.
		return this.afterCommit.reschedule(queue, id, runAt != null, time) || moved;
	}

	@Override
	public <T> TaskQueue<T> queue(String queue, Class<T> payloadType) {
		return TaskQueue.of(this, queue, payloadType, this.declarations::checkPayloadType);
	}

	@Override
	public Optional<TaskInfo> find(String queue, TaskId id) {
		String checked = Names.checkQueue(queue);
		AsyncRequests async = this.async;
		Optional<TaskInfo> held = (async != null) ? async.held(checked, id) : Optional.empty();
		return held.isPresent() ? held : this.stored.find(checked, id);
	}

	// The non-blocking API: validated on the calling thread and sent on the reactive
	// connection (AsyncRequests). Without one, the interface's defaults run the blocking
	// methods on the calling thread.

	@Override
	public CompletableFuture<ScheduleResult> submitAsync(TaskRequest request) {
		AsyncRequests async = this.async;
		return (async != null) ? async.submit(request) : DelayedTaskScheduler.super.submitAsync(request);
	}

	@Override
	public CompletableFuture<List<ScheduleResult>> scheduleAllAsync(Collection<TaskRequest> requests) {
		AsyncRequests async = this.async;
		return (async != null) ? async.scheduleAll(requests) : DelayedTaskScheduler.super.scheduleAllAsync(requests);
	}

	@Override
	public CompletableFuture<Boolean> cancelAsync(String queue, TaskId id) {
		AsyncRequests async = this.async;
		return (async != null) ? async.cancel(queue, id) : DelayedTaskScheduler.super.cancelAsync(queue, id);
	}

	@Override
	public CompletableFuture<Boolean> rescheduleAsync(String queue, TaskId id, Duration delay) {
		AsyncRequests async = this.async;
		return (async != null) ? async.reschedule(queue, id, delay)
				: DelayedTaskScheduler.super.rescheduleAsync(queue, id, delay);
	}

	@Override
	public CompletableFuture<Boolean> rescheduleAsync(String queue, TaskId id, Instant runAt) {
		AsyncRequests async = this.async;
		return (async != null) ? async.reschedule(queue, id, runAt)
				: DelayedTaskScheduler.super.rescheduleAsync(queue, id, runAt);
	}

	@Override
	public CompletableFuture<Optional<TaskInfo>> findAsync(String queue, TaskId id) {
		AsyncRequests async = this.async;
		return (async != null) ? async.find(queue, id) : DelayedTaskScheduler.super.findAsync(queue, id);
	}

}

package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToIntFunction;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.EnqueueCall;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.PreparedTask;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.ReactiveStoreScripts;
import dev.delayedtasks.internal.store.script.Reply;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The non-blocking side of {@link RedisDelayedTaskScheduler}: the same scripts, keys and
 * replies as the blocking side, sent on the reactive connection
 * ({@link ReactiveStoreScripts}). Requests arrive validated; single tasks go through the
 * per-queue lanes of {@link AsyncEnqueue}, {@code scheduleAll} sends its batches one
 * after another.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class AsyncScheduling {

	private static final Log logger = LogFactory.getLog(AsyncScheduling.class);

	private final ReactiveStoreScripts scripts;

	private final StoreSettings settings;

	private final QueueIndex queues;

	private final int batchSize;

	private final long batchBytes;

	private final DelayedTaskListener listener;

	private final EnqueueCall enqueueCall;

	private final RedisClock clock = new RedisClock();

	private final AsyncEnqueue lanes;

	AsyncScheduling(ReactiveStoreScripts scripts, StoreSettings settings, PayloadCodec codec, QueueIndex queues,
			ToIntFunction<String> defaultMaxAttempts, int batchSize, long batchBytes, DelayedTaskListener listener,
			EnqueueCall enqueueCall, OutageBuffer outageBuffer) {
		this.scripts = scripts;
		this.settings = settings;
		this.queues = queues;
		this.batchSize = batchSize;
		this.batchBytes = batchBytes;
		this.listener = listener;
		this.enqueueCall = enqueueCall;
		this.lanes = new AsyncEnqueue(new AsyncEnqueue.Sender() {

			@Override
			public Mono<List<EnqueueCall.Outcome>> send(String queue, List<PreparedTask> tasks) {
				return AsyncScheduling.this.send(queue, tasks);
			}

			@Override
			public Mono<List<Boolean>> cancel(String queue, List<TaskId> ids) {
				return Flux.fromIterable(ids).concatMap((id) -> cancelCall(queue, id)).collectList();
			}

		}, listener, batchSize, batchBytes, outageBuffer, Schedulers.parallel(), this.clock);
	}

	CompletableFuture<ScheduleResult> submit(PreparedTask task) {
		return this.lanes.submit(task);
	}

	/**
	 * Tasks of {@link #submit} accepted and not yet stored or failed.
	 * @return the count
	 */
	int accepted() {
		return this.lanes.accepted();
	}

	/**
	 * A task a lane of this instance holds, not stored yet.
	 * @param queue the queue
	 * @param id the task
	 * @return the task in state {@code HELD}, or empty
	 */
	Optional<TaskInfo> held(String queue, TaskId id) {
		return this.lanes.held(queue, id);
	}

	/**
	 * Take back a task a lane of this instance holds.
	 * @param queue the queue
	 * @param id the task
	 * @return whether a lane held it
	 */
	boolean withdraw(String queue, TaskId id) {
		return this.lanes.withdraw(queue, id);
	}

	/**
	 * Give the lanes a last chance to store what they hold, then report what is left.
	 */
	void close() {
		this.lanes.close();
	}

	CompletableFuture<List<ScheduleResult>> scheduleAll(List<PreparedTask> prepared) {
		Map<String, List<Integer>> positionsByQueue = new LinkedHashMap<>();
		for (int i = 0; i < prepared.size(); i++) {
			positionsByQueue.computeIfAbsent(prepared.get(i).queue(), (queue) -> new ArrayList<>()).add(i);
		}
		List<List<Integer>> batches = new ArrayList<>();
		positionsByQueue.forEach((queue, positions) -> {
			int from = 0;
			while (from < positions.size()) {
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
				batches.add(positions.subList(from, to));
				from = to;
			}
		});
		ScheduleResult[] results = new ScheduleResult[prepared.size()];
		// One batch after another, as the blocking scheduleAll sends them: when one
		// fails, later ones are not sent.
		return Flux.fromIterable(batches).concatMap((batch) -> {
			List<PreparedTask> tasks = batch.stream().map(prepared::get).toList();
			String queue = tasks.get(0).queue();
			return send(queue, tasks).doOnNext((outcomes) -> {
				List<ScheduleResult> stored = new ArrayList<>(outcomes.size());
				for (int i = 0; i < outcomes.size(); i++) {
					ScheduleResult result = outcomes.get(i).get();
					results[batch.get(i)] = result;
					stored.add(result);
				}
				stored.forEach((result) -> this.listener.scheduled(queue, result));
			});
		}).then(Mono.fromSupplier(() -> Arrays.asList(results))).toFuture();
	}

	/**
	 * One {@code enqueue} call: the queue is added to the index first, once per process.
	 * @param queue the queue
	 * @param tasks its tasks
	 * @return one outcome per task
	 */
	private Mono<List<EnqueueCall.Outcome>> send(String queue, List<PreparedTask> tasks) {
		TaskId first = tasks.get(0).id();
		Mono<List<Object>> call = this.scripts.runEncoded(Script.ENQUEUE, EnqueueCall.keyCount(tasks.size()),
				this.enqueueCall.encode(queue, tasks), queue, first.value());
		if (!this.queues.isRegistered(queue)) {
			call = this.scripts.addToSet(this.queues.key(), queue)
				.onErrorMap((ex) -> new TaskStoreException("Redis failed to register queue '" + queue + "' (task "
						+ first + "): " + StoreScripts.reason(ReactiveStoreScripts.dataAccess(ex)), first, ex))
				.doOnSuccess((done) -> this.queues.registered(queue))
				.then(call);
		}
		return call.flatMap((reply) -> {
			this.clock.observe(EnqueueCall.redisMillis(reply), System.nanoTime());
			List<EnqueueCall.Outcome> outcomes = this.enqueueCall.outcomes(queue, tasks, reply);
			return EnqueueCall.fresh(reply) ? registerAgain(queue, first).thenReturn(outcomes) : Mono.just(outcomes);
		});
	}

	/**
	 * Add the queue to the index after the {@code enqueue} script found its partition new
	 * or removed, as the blocking side does: the queue may have been removed from the
	 * index after this process registered it, and this write, after the script, cannot be
	 * undone by that removal. The tasks are stored by now, so a failure is logged, not
	 * passed on: the queue is registered again on its next schedule.
	 * @param queue the queue
	 * @param id a task just stored, for the log
	 * @return completes once the queue is in the index, or the failure was logged
	 */
	private Mono<Void> registerAgain(String queue, TaskId id) {
		return Mono.defer(() -> {
			// Forgotten first: if the SADD fails, the next schedule tries again.
			this.queues.forget(queue);
			return this.scripts.addToSet(this.queues.key(), queue);
		}).doOnSuccess((done) -> this.queues.registered(queue)).onErrorResume((ex) -> {
			logger.warn("Task " + id + " was stored, but Redis failed to add queue '" + queue + "' to the index of"
					+ " known queues; it is added on the next schedule: "
					+ StoreScripts.reason(ReactiveStoreScripts.dataAccess(ex)));
			return Mono.empty();
		});
	}

	CompletableFuture<Boolean> cancel(String queue, TaskId id) {
		if (this.lanes.withdraw(queue, id)) {
			return CompletableFuture.completedFuture(true);
		}
		return cancelCall(queue, id).map((cancelled) -> {
			if (cancelled) {
				this.listener.cancelled(queue, id);
			}
			return cancelled;
		}).toFuture();
	}

	private Mono<Boolean> cancelCall(String queue, TaskId id) {
		PartitionKeys keys = this.settings.keys(queue);
		String value = id.value();
		return this.scripts
			.run(Script.CANCEL,
					List.of(keys.sched(), keys.stats(), keys.task(value), keys.payload(value), keys.error(value)),
					List.of(keys.base(), value, RedisTaskStore.millis(this.settings.tombstoneTtl())), queue, value)
			.map((reply) -> new Reply(reply).code(1) == 'C');
	}

	CompletableFuture<Boolean> reschedule(String queue, TaskId id, @Nullable Duration delay, @Nullable Instant runAt) {
		PartitionKeys keys = this.settings.keys(queue);
		long time = PreparedTask.dueArgument(queue, delay, runAt);
		String value = id.value();
		return this.scripts
			.run(Script.RESCHEDULE,
					List.of(keys.sched(), keys.ready(), keys.wake(), keys.tick(), keys.stats(), keys.task(value)),
					List.of(keys.base(), value, (runAt != null) ? "A" : "D", Long.toString(time),
							Integer.toString(this.settings.fanoutBatch())),
					queue, value)
			.map((reply) -> new Reply(reply).code(1) == 'O')
			.toFuture();
	}

	CompletableFuture<Optional<TaskInfo>> find(String queue, TaskId id) {
		Optional<TaskInfo> held = this.lanes.held(queue, id);
		if (held.isPresent()) {
			return CompletableFuture.completedFuture(held);
		}
		PartitionKeys keys = this.settings.keys(queue);
		return this.scripts.hashEntries(keys.task(id.value()))
			.flatMap((fields) -> (fields.isEmpty()) ? Mono.just(Optional.<TaskInfo>empty())
					: this.scripts.get(keys.error(id.value()))
						.map(Optional::of)
						.defaultIfEmpty(Optional.empty())
						.map((error) -> Optional
							.ofNullable(StoredTasks.taskInfo(queue, id, fields, error.orElse(null)))))
			.onErrorMap((ex) -> StoredTasks.readFailure(queue, id, ex))
			.toFuture();
	}

}

package dev.delayedtasks.internal.worker;

import java.util.concurrent.Executor;

import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskHandoffs;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.TaskScheduler;

/**
 * What every {@link QueueWorker} of an instance shares.
 *
 * @param store the task store
 * @param connections opens blocking connections
 * @param settings how workers run
 * @param storeSettings key layout and script limits
 * @param codec the payload codec
 * @param failureRouter decides about failed runs
 * @param listeners the listeners
 * @param instanceId this instance's id, for timer ownership
 * @param handlerExecutor runs handlers, for every queue; each queue's permits bound how
 * many of its handlers run at once
 * @param scheduler fires handler timeouts and local lease checks; it never waits on Redis
 * (heartbeats and timers run on each queue's own threads)
 * @param observations observes handler runs
 * @param occurrenceGate applies recurring schedules' policies before an occurrence runs
 * @param handoffs where dispatchers offer to take tasks from this process's
 * {@code enqueue} calls, or {@code null} when they take none
 * @param loopNonces the nonces of this instance's claim loops
 * @author delayed-tasks
 * @since 0.1.0
 */
record WorkerServices(TaskStore store, BlockingConnections connections, WorkerSettings settings,
		StoreSettings storeSettings, PayloadCodec codec, FailureRouter failureRouter, Listeners listeners,
		String instanceId, Executor handlerExecutor, TaskScheduler scheduler, RunObservations observations,
		OccurrenceGate occurrenceGate, @Nullable TaskHandoffs handoffs, ClaimLoopNonces loopNonces) {

}

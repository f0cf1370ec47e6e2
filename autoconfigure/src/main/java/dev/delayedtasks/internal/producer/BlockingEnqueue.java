package dev.delayedtasks.internal.producer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.EnqueueCall;
import dev.delayedtasks.internal.store.PreparedTask;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.TaskHandoff;
import dev.delayedtasks.internal.store.TaskHandoffs;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * Stores prepared tasks with {@code enqueue} calls on the blocking connection: one call
 * per queue and batch, a batch bounded by task count and by envelope bytes so that no
 * call holds Redis for long, and the queue registered in the index of known queues before
 * (and, for a new partition, again after) the call.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class BlockingEnqueue {

	private static final Log logger = LogFactory.getLog(BlockingEnqueue.class);

	private final StoreScripts scripts;

	private final QueueIndex queues;

	private final EnqueueCall enqueueCall;

	private final DelayedTaskListener listener;

	private final int batchSize;

	private final long batchBytes;

	private final TaskHandoffs handoffs;

	/**
	 * Create the sender.
	 * @param scripts the scripts
	 * @param queues the queue index
	 * @param enqueueCall the encoding of the call and its reply
	 * @param listener told what was scheduled
	 * @param batchSize the most tasks per call
	 * @param batchBytes the most envelope bytes per call (a larger task goes alone)
	 * @param handoffs the dispatchers of this process that take the ready tasks a call
	 * creates
	 */
	BlockingEnqueue(StoreScripts scripts, QueueIndex queues, EnqueueCall enqueueCall, DelayedTaskListener listener,
			int batchSize, long batchBytes, TaskHandoffs handoffs) {
		this.scripts = scripts;
		this.queues = queues;
		this.enqueueCall = enqueueCall;
		this.listener = listener;
		this.batchSize = batchSize;
		this.batchBytes = batchBytes;
		this.handoffs = handoffs;
	}

	/**
	 * Send tasks in batches of one queue each, in order within a queue.
	 * @param prepared the tasks; {@code null} for positions to skip; each position is set
	 * to {@code null} once sent, so its envelope can go
	 * @param results where the outcome of each sent task goes, by position
	 * @param onFailure told about a batch that fails, after which the others are sent;
	 * {@code null} to throw the first failure
	 */
	void sendBatches(List<@Nullable PreparedTask> prepared, @Nullable ScheduleResult[] results,
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
				List<EnqueueCall.@Nullable Outcome> outcomes;
				try {
					outcomes = enqueue(queue, tasks, onFailure == null);
				}
				catch (RuntimeException ex) {
					if (onFailure == null) {
						throw ex;
					}
					onFailure.failed(queue, tasks, ex);
					outcomes = null;
				}
				for (int i = 0; i < batch.size(); i++) {
					EnqueueCall.@Nullable Outcome outcome = (outcomes != null) ? outcomes.get(i) : null;
					if (outcome != null && outcome.failure() != null && onFailure != null) {
						// Only this task failed: the others of the call are stored.
						onFailure.failed(queue, List.of(tasks.get(i)), outcome.failure());
					}
					else if (outcome != null) {
						results[batch.get(i)] = outcome.result();
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
	 * @return the result of each task, by position; {@code null} for those of a batch
	 * that failed
	 */
	@Nullable ScheduleResult[] sendEach(List<PreparedTask> tasks, AfterCommitSends.BatchFailure onFailure) {
		@Nullable ScheduleResult[] results = new ScheduleResult[tasks.size()];
		sendBatches(new ArrayList<>(tasks), results, onFailure);
		return results;
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

	/**
	 * One call, and the listener told of each task it stored.
	 * @param queue the queue
	 * @param tasks its tasks
	 * @param throwFirstFailure whether a task that failed (corrupt data under its id)
	 * throws, once the listener heard of the others
	 * @return one outcome per task
	 */
	private List<EnqueueCall.Outcome> enqueue(String queue, List<PreparedTask> tasks, boolean throwFirstFailure) {
		List<EnqueueCall.Outcome> outcomes = send(queue, tasks);
		RuntimeException failure = null;
		for (EnqueueCall.Outcome outcome : outcomes) {
			if (outcome.failure() != null) {
				failure = (failure != null) ? failure : outcome.failure();
			}
			else {
				this.listener.scheduled(queue, outcome.result());
			}
		}
		if (failure != null && throwFirstFailure) {
			throw failure;
		}
		return outcomes;
	}

	/**
	 * One {@code enqueue} call on the blocking connection. When the call carries one task
	 * and a dispatcher of the queue waits for work here with room to spare, the call
	 * leases the task, if it is ready, for that dispatcher and this thread hands it over:
	 * no wake-up and no claim.
	 * @param queue the queue
	 * @param tasks its tasks
	 * @return one outcome per task
	 */
	List<EnqueueCall.Outcome> send(String queue, List<PreparedTask> tasks) {
		registerQueue(queue, tasks.get(0).id());
		// A call of one task: concurrent calls that share a script call are claimed in
		// batches anyway, and their first caller would keep the others waiting while it
		// hands tasks over.
		TaskHandoff.Reservation reservation = (tasks.size() == 1 && readyNow(tasks.get(0)))
				? this.handoffs.reserve(queue, 1) : null;
		long sent = System.nanoTime();
		List<Object> reply;
		List<EnqueueCall.Outcome> outcomes;
		try {
			reply = this.scripts.runEncoded(Script.ENQUEUE, EnqueueCall.keyCount(tasks.size()),
					this.enqueueCall.encode(queue, tasks, (reservation != null) ? reservation.lease() : null), queue,
					tasks.get(0).id().value());
			outcomes = this.enqueueCall.outcomes(queue, tasks, reply);
		}
		catch (RuntimeException | Error ex) {
			if (reservation != null) {
				reservation.lost();
			}
			throw ex;
		}
		if (reservation != null) {
			handOver(queue, tasks, outcomes, reply, reservation, sent);
		}
		if (EnqueueCall.fresh(reply)) {
			// After the write: a removal of the queue from the index that ran before it
			// cannot undo this one.
			registerAgain(queue, tasks.get(0).id());
		}
		return outcomes;
	}

	/**
	 * Hand the tasks the call leased to the dispatcher. The tasks are stored whatever
	 * happens here, so nothing is thrown: a failure gives them back as a lost reply
	 * would.
	 * @param queue the queue
	 * @param tasks the tasks of the call
	 * @param outcomes their outcomes
	 * @param reply the call's reply
	 * @param reservation the room the call was given
	 * @param sent when the call was sent: the leases run from then
	 */
	private static void handOver(String queue, List<PreparedTask> tasks, List<EnqueueCall.Outcome> outcomes,
			List<Object> reply, TaskHandoff.Reservation reservation, long sent) {
		List<ClaimedTask> leased;
		long now;
		try {
			now = EnqueueCall.redisMillis(reply);
			leased = EnqueueCall.handedOff(tasks, outcomes, now);
		}
		catch (RuntimeException | Error ex) {
			logger.warn("Could not read the tasks of queue '" + queue + "' leased for this instance's handler; they"
					+ " are given back: " + ex);
			reservation.lost();
			return;
		}
		reservation.accept(leased, now, sent);
	}

	/**
	 * Whether the task may be ready when the call runs: due now, or due at an instant up
	 * to a second ahead of this instance's clock (Redis's may be ahead). Room is set
	 * aside for it; the script decides. Not when the task's envelope was dropped to be
	 * written again for the call (a large {@code scheduleAll}): a handler gets exactly
	 * the envelope that was stored.
	 * @param task the task of a call
	 * @return whether it may be ready
	 */
	private static boolean readyNow(PreparedTask task) {
		if (task.envelope() == null) {
			return false;
		}
		return task.absolute() ? task.time() <= System.currentTimeMillis() + 1000 : task.time() <= 0;
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
	 * ({@code RedisQueueControl.remove}). The tasks are stored by now, so a failure here
	 * is logged, not thrown: the queue is registered again on its next schedule.
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

}

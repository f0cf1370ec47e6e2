package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.Collections;
import java.util.List;

import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimitedException;
import org.jspecify.annotations.Nullable;

/**
 * The operations workers and the timer perform on a queue partition, each one atomic
 * script. Every transition out of the leased state presents the lease token, so a worker
 * that lost its lease can never complete, retry or resurrect a task somebody else now
 * runs.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface TaskStore {

	/**
	 * Promote due tasks, reap expired leases, and lease up to {@code max} ready tasks.
	 * @param queue the queue
	 * @param max the most tasks to lease
	 * @param nonce unique to this claim call (the dispatcher's random nonce and a
	 * sequence number), the first part of every token it mints; {@link #recover} finds
	 * its tasks by it
	 * @return the claimed tasks and the partition's next deadlines
	 */
	ClaimBatch claim(String queue, int max, String nonce);

	/**
	 * Write a queue's configured flow control unless the last start wrote the same
	 * configuration: a change made at run time lasts until the configuration changes.
	 * Idle dispatchers are woken to claim under the new limits.
	 * @param queue the queue
	 * @param configured the limits its configuration sets
	 * @return whether it wrote them
	 * @throws dev.delayedtasks.TaskStoreException if Redis cannot be reached
	 */
	boolean configureLimits(String queue, QueueLimits configured);

	/**
	 * Take or keep the partition's timer, then promote due tasks and reap expired leases.
	 * @param queue the queue
	 * @param ownerId this instance's id
	 * @param timerTtl how long the timer lease lasts without another tick
	 * @param tickConsumed whether the caller popped a {@code tick} token for this call:
	 * when another instance owns the timer, the token is handed back to it
	 * @return what the tick found
	 */
	default TimerTick promote(String queue, String ownerId, Duration timerTtl, boolean tickConsumed) {
		return promote(queue, ownerId, timerTtl, tickConsumed, null);
	}

	/**
	 * Take or keep the partition's timer, promote due tasks and reap expired leases,
	 * then, as the owner of a queue that is not paused, lease up to {@code handoff.max()}
	 * ready tasks for this instance's idle dispatcher, as a claim would.
	 * @param queue the queue
	 * @param ownerId this instance's id
	 * @param timerTtl how long the timer lease lasts without another tick
	 * @param tickConsumed whether the caller popped a {@code tick} token for this call
	 * @param handoff what to lease for the dispatcher, or {@code null} for nothing
	 * @return what the tick found, with the tasks it leased
	 */
	TimerTick promote(String queue, String ownerId, Duration timerTtl, boolean tickConsumed,
			TaskHandoff.@Nullable HandoffLease handoff);

	/**
	 * Take or keep the partition's timer, then promote due tasks and reap expired leases.
	 * @param queue the queue
	 * @param ownerId this instance's id
	 * @param timerTtl how long the timer lease lasts without another tick
	 * @return what the tick found
	 */
	default TimerTick promote(String queue, String ownerId, Duration timerTtl) {
		return promote(queue, ownerId, timerTtl, false);
	}

	/**
	 * Give up the partition's timer if this instance holds it, and wake a contender
	 * blocked on the partition's handover list, so another instance takes over at once.
	 * @param queue the queue
	 * @param ownerId this instance's id
	 */
	void resignTimer(String queue, String ownerId);

	/**
	 * Complete leased tasks: delete them and free their unique keys.
	 * @param queue the queue
	 * @param leases the leases
	 * @return one outcome per lease
	 */
	default List<AckOutcome> ack(String queue, List<Lease> leases) {
		return ack(queue, leases, Collections.nCopies(leases.size(), null));
	}

	/**
	 * Complete leased tasks with their handlers' results: delete them, free their unique
	 * keys, and record the outcome of those that asked for one.
	 * @param queue the queue
	 * @param leases the leases
	 * @param results per lease, the handler's return value as JSON, or {@code null}
	 * @return one outcome per lease
	 */
	List<AckOutcome> ack(String queue, List<Lease> leases, List<@Nullable String> results);

	/**
	 * Record a failed run: schedule the retry after the back-off, or dead-letter the
	 * task.
	 * @param queue the queue
	 * @param lease the lease
	 * @param failure the failure and the policy's decision
	 * @return the outcome
	 */
	FailOutcome fail(String queue, Lease lease, TaskFailure failure);

	/**
	 * Extend leases while their handlers run.
	 * @param queue the queue
	 * @param leases the leases
	 * @return one outcome per lease
	 */
	List<ExtendOutcome> extend(String queue, List<Lease> leases);

	/**
	 * Give leased tasks back to the head of the ready list without counting a delivery
	 * (graceful shutdown, a lease that ran out).
	 * @param queue the queue
	 * @param leases the leases
	 * @return one outcome per lease
	 */
	default List<ReleaseOutcome> release(String queue, List<Lease> leases) {
		return release(queue, leases, Duration.ZERO);
	}

	/**
	 * Give leased tasks back to the head of the ready list without counting a delivery,
	 * and hold the whole queue, on every instance, for {@code hold} from now in Redis
	 * time: nothing of it is leased before then (a handler's "slow down"). A longer hold
	 * in force stays.
	 * @param queue the queue
	 * @param leases the leases
	 * @param hold how long to hold the queue, zero for no hold
	 * @return one outcome per lease
	 */
	default List<ReleaseOutcome> release(String queue, List<Lease> leases, Duration hold) {
		return release(queue, leases, hold, RateLimitedException.Scope.QUEUE);
	}

	/**
	 * Give leased tasks back without counting a delivery, and hold the whole queue or
	 * each task's rate key for {@code hold} from now in Redis time. A task whose rate key
	 * is held is set aside until the hold's end instead of going back to the head of the
	 * ready list; a task without a rate key, or on a queue without a
	 * {@code key-rate-limit}, holds the queue. A longer hold in force stays.
	 * @param queue the queue
	 * @param leases the leases
	 * @param hold how long to hold, zero for no hold
	 * @param scope what to hold
	 * @return one outcome per lease
	 */
	List<ReleaseOutcome> release(String queue, List<Lease> leases, Duration hold, RateLimitedException.Scope scope);

	/**
	 * Give back, without counting a delivery, the tasks that claims with the given nonces
	 * leased but whose replies never arrived (a timeout or a broken connection while
	 * Redis still ran them). Sent on the connection the claims used, it runs after them.
	 * @param queue the queue
	 * @param claimNonces the nonces of the claims whose replies were lost
	 * @return how many tasks went back to the ready list
	 */
	int recover(String queue, List<String> claimNonces);

	/**
	 * Outcome of completing a task.
	 */
	enum AckOutcome {

		/** Completed and deleted. */
		DONE,

		/** The token did not match: somebody else owns the task now (a duplicate run). */
		STALE,

		/**
		 * The task no longer exists (an acknowledgement replayed after it already
		 * completed).
		 */
		GONE,

		/** The task's data was unreadable; it was dead-lettered as corrupt. */
		CORRUPT

	}

	/**
	 * Outcome of extending a lease.
	 */
	enum ExtendOutcome {

		/** Extended. */
		EXTENDED,

		/** Extended, and a cancel was requested: the handler should stop. */
		CANCEL_REQUESTED,

		/** The lease is no longer this worker's. */
		LOST

	}

	/**
	 * Outcome of releasing a lease.
	 */
	enum ReleaseOutcome {

		/** Back at the head of the ready list. */
		RELEASED,

		/** A cancel had been requested: the task was deleted instead. */
		CANCELLED,

		/** The lease is another worker's now. */
		LOST,

		/**
		 * The task holds no lease: given back already (a release sent again after its
		 * reply was lost) or gone.
		 */
		GONE

	}

	/**
	 * Outcome of a failed run.
	 *
	 * @param now Redis time, epoch milliseconds
	 * @param kind what happened
	 * @param dueMs the retry's due time, or -1
	 */
	record FailOutcome(long now, Kind kind, long dueMs) {

		/**
		 * What happened to a failed task.
		 */
		public enum Kind {

			/** Scheduled for a retry after its back-off. */
			RETRY_SCHEDULED,

			/** Ready for an immediate retry. */
			RETRY_READY,

			/** Dead-lettered (retries exhausted or not retryable). */
			DEAD,

			/** Deleted: a cancel had been requested while it ran. */
			CANCELLED,

			/** The token did not match; nothing changed. */
			STALE,

			/**
			 * The task no longer exists, or this lease's failure was already recorded (a
			 * call replayed after its reply was lost); nothing changed.
			 */
			GONE,

			/** The task's data was unreadable; dead-lettered as corrupt. */
			CORRUPT

		}

	}

}

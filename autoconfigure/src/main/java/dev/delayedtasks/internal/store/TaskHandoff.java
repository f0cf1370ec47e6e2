package dev.delayedtasks.internal.store;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A dispatcher of this process that takes tasks straight from the {@code enqueue} call
 * that creates them: when it has room, the call leases the created tasks that are ready
 * at once (as a claim would, with a token of the dispatcher's), and the scheduling thread
 * hands them over, which saves the wake-up and the claim.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface TaskHandoff {

	/**
	 * Set aside room for up to {@code max} tasks, without waiting.
	 * @param max the most tasks the call may lease
	 * @return the reservation, or {@code null} when there is no room now
	 */
	@Nullable Reservation reserve(int max);

	/**
	 * Room set aside for the tasks of one call. Exactly one of {@link #accept} and
	 * {@link #lost} is called, once.
	 */
	interface Reservation {

		/**
		 * What the call asks the script to do.
		 * @return the lease to take
		 */
		HandoffLease lease();

		/**
		 * Take the tasks the call leased and give back the rest of the room.
		 * @param tasks the leased tasks, possibly none
		 * @param redisNowMs the Redis time of the call, epoch milliseconds
		 * @param sentNanos when the call was sent ({@link System#nanoTime()}): the leases
		 * run from then
		 */
		void accept(List<ClaimedTask> tasks, long redisNowMs, long sentNanos);

		/**
		 * The call failed or its reply could not be read: any task it leased is given
		 * back by the lease nonce, and the room is freed.
		 */
		void lost();

	}

	/**
	 * The hand-off argument of an {@code enqueue} call.
	 *
	 * @param nonce the lease nonce: tokens are {@code <nonce>:<fence>}
	 * @param max the most tasks to lease
	 * @param leaseMs the lease duration
	 * @param tick whether the first lease of an empty lease set must wake the timer owner
	 * (it would be reaped before the owner's next promotion)
	 */
	record HandoffLease(String nonce, int max, long leaseMs, boolean tick) {

	}

}

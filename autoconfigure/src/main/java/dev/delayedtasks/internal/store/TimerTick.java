package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.List;

/**
 * What a timer tick ({@code promote}) found.
 *
 * @param now the Redis time, epoch milliseconds
 * @param owner whether the caller owns the partition's timer now
 * @param ttlMs the timer lease's remaining time (another owner's when not the owner)
 * @param nextDueMs the earliest scheduled due time, or -1
 * @param earliestLeaseMs the earliest lease deadline, or -1
 * @param more whether a limit stopped the script with work left
 * @param handedOff the ready tasks it leased for this instance's idle dispatcher
 * ({@link TaskHandoff})
 * @param expired the ready tasks it found past their expiry while leasing, and ended
 * @author delayed-tasks
 * @since 0.1.0
 */
public record TimerTick(long now, boolean owner, long ttlMs, long nextDueMs, long earliestLeaseMs, boolean more,
		List<ClaimedTask> handedOff, List<ExpiredTask> expired) {

	/**
	 * A tick that leased nothing.
	 * @param now the Redis time, epoch milliseconds
	 * @param owner whether the caller owns the partition's timer now
	 * @param ttlMs the timer lease's remaining time (another owner's when not the owner)
	 * @param nextDueMs the earliest scheduled due time, or -1
	 * @param earliestLeaseMs the earliest lease deadline, or -1
	 * @param more whether a limit stopped the script with work left
	 */
	public TimerTick(long now, boolean owner, long ttlMs, long nextDueMs, long earliestLeaseMs, boolean more) {
		this(now, owner, ttlMs, nextDueMs, earliestLeaseMs, more, List.of(), List.of());
	}

	/**
	 * The longest a timer owner waits between two promotions: a third of its timer lease,
	 * as it renews the lease that often. A claim relies on it to tell the owner of a new
	 * earliest lease only when that lease would be reaped sooner.
	 * @param timerTtl the timer lease
	 * @return the interval
	 */
	public static Duration rearmInterval(Duration timerTtl) {
		return timerTtl.dividedBy(3);
	}

}

package dev.delayedtasks.internal.store;

import java.util.List;

/**
 * What a claim did: the tasks it leased, and when the next deadline of the partition
 * falls.
 *
 * @param now Redis time of the claim, epoch milliseconds
 * @param nextDueMs the earliest scheduled due time, or -1
 * @param earliestLeaseMs the earliest lease deadline, or -1
 * @param more whether a limit stopped the script with work left
 * @param paused whether the queue is paused (nothing was claimed)
 * @param tasks the leased tasks
 * @param expired the tasks it found past their expiry and ended instead
 * @param throttledUntilMs when the queue's flow control left ready tasks behind: 0 until
 * a lease ends (its global concurrency is in use), else the Redis time, epoch
 * milliseconds, at which its rate limit lets one more lease; -1 when it held nothing back
 * @author delayed-tasks
 * @since 0.1.0
 */
public record ClaimBatch(long now, long nextDueMs, long earliestLeaseMs, boolean more, boolean paused,
		List<ClaimedTask> tasks, List<ExpiredTask> expired, long throttledUntilMs) {

}

package dev.delayedtasks.internal.store;

import dev.delayedtasks.TaskId;
import org.jspecify.annotations.Nullable;

/**
 * A task a claim leased to this worker.
 *
 * @param id the task
 * @param token the lease token
 * @param envelope the stored payload envelope (JSON with headers and body)
 * @param failures runs that failed before this one
 * @param deliveries claims including this one
 * @param maxAttempts runs allowed in all
 * @param dueMs the due time, Redis epoch milliseconds
 * @param createdMs the creation time, Redis epoch milliseconds
 * @param uniqueDigest the unique-key digest, or {@code null}
 * @author delayed-tasks
 * @since 0.1.0
 */
public record ClaimedTask(TaskId id, String token, String envelope, int failures, int deliveries, int maxAttempts,
		long dueMs, long createdMs, @Nullable String uniqueDigest) {

	/**
	 * The lease to present when this run ends.
	 * @return the lease
	 */
	public Lease lease() {
		return new Lease(this.id, this.token, this.uniqueDigest);
	}

}

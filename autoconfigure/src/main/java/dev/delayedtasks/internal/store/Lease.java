package dev.delayedtasks.internal.store;

import dev.delayedtasks.TaskId;
import org.jspecify.annotations.Nullable;

/**
 * A worker's hold on a claimed task: what it must present to complete, fail, extend or
 * release it.
 *
 * @param id the task
 * @param token the lease token minted by the claim
 * @param uniqueDigest the task's unique-key digest, so completing it can free the slot,
 * or {@code null}
 * @author delayed-tasks
 * @since 0.1.0
 */
public record Lease(TaskId id, String token, @Nullable String uniqueDigest) {

	/**
	 * The fence of the token ({@code <nonce>:<fence>}): the partition-wide claim number,
	 * so leases of one partition sort in the order they were made.
	 * @return the fence, or 0 for a token without one
	 */
	public long fence() {
		int colon = this.token.lastIndexOf(':');
		try {
			return Long.parseLong(this.token.substring(colon + 1));
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

}

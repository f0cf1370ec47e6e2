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

}

package dev.delayedtasks.internal.store;

import java.time.Instant;

import dev.delayedtasks.TaskId;

/**
 * A task that a claim found past its expiry before it started, and ended instead of
 * leasing: kept as a dead letter with reason {@code expired}, or deleted.
 *
 * @param id the task
 * @param attempts the runs it had before (a retry that expired)
 * @param createdAt when it was stored, Redis time
 * @param expiresAt its expiry, Redis time
 * @author delayed-tasks
 * @since 0.1.0
 */
public record ExpiredTask(TaskId id, int attempts, Instant createdAt, Instant expiresAt) {

}

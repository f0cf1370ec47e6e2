package dev.delayedtasks.internal.worker;

import java.time.Duration;

import dev.delayedtasks.QueueLimits;
import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryPolicy;

/**
 * How one handler's container runs, every attribute resolved: the annotation's, else the
 * queue's configuration.
 *
 * @param concurrency how many tasks run at once on this instance
 * @param timeout the longest run, or {@code null} for none
 * @param retryPolicy which failures are retried and with what back-off
 * @param limits the queue's configured flow control
 * @author delayed-tasks
 * @since 0.1.0
 */
record ContainerSettings(int concurrency, @Nullable Duration timeout, RetryPolicy retryPolicy, QueueLimits limits) {

}

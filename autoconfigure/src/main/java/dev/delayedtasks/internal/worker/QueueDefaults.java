package dev.delayedtasks.internal.worker;

import java.time.Duration;

import dev.delayedtasks.QueueLimits;
import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryPolicy;

/**
 * What configuration says about a queue, for the attributes its handler's annotation
 * leaves open, and the max retries every instance gives the queue's tasks.
 *
 * @param concurrency how many tasks of the queue an instance runs at once
 * @param timeout the longest run, or {@code null} for none
 * @param retryPolicy which failures are retried and with what back-off
 * @param maxRetries the retries a task of the queue gets when its request sets no max
 * attempts; producers store {@code maxRetries + 1} as its max attempts
 * @param limits the queue's configured flow control, written to Redis when a handler of
 * the queue starts
 * @author delayed-tasks
 * @since 0.1.0
 */
public record QueueDefaults(int concurrency, @Nullable Duration timeout, RetryPolicy retryPolicy, int maxRetries,
		QueueLimits limits) {

}

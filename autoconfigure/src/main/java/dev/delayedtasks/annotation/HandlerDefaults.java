package dev.delayedtasks.annotation;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryPolicy;

/**
 * Settings for the attributes a {@link DelayedTaskHandler} leaves empty, from
 * configuration.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface HandlerDefaults {

	/**
	 * The concurrency of a queue.
	 * @param queue the queue
	 * @return the concurrency
	 */
	int concurrency(String queue);

	/**
	 * The handler timeout of a queue.
	 * @param queue the queue
	 * @return the timeout, or {@code null} for none
	 */
	@Nullable Duration timeout(String queue);

	/**
	 * The retry policy of a queue.
	 * @param queue the queue
	 * @return the policy
	 */
	RetryPolicy retryPolicy(String queue);

}

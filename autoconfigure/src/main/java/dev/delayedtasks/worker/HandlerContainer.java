package dev.delayedtasks.worker;

import java.time.Duration;

import dev.delayedtasks.internal.worker.HandlerContainerFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryPolicy;

/**
 * One running (or stopped) {@code @DelayedTaskHandler} on this instance, with its
 * attributes as the {@link HandlerContainerFactory} resolved them, as
 * {@link DelayedTaskHandlerRegistry#getHandler(String)} exposes it.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface HandlerContainer {

	/**
	 * The handler id.
	 * @return the id
	 */
	String id();

	/**
	 * The queue.
	 * @return the queue
	 */
	String queue();

	/**
	 * How many tasks it runs at once on this instance.
	 * @return the concurrency
	 */
	int concurrency();

	/**
	 * The longest run, past which the handler is interrupted and the run fails.
	 * @return the timeout, or {@code null} for none
	 */
	@Nullable Duration timeout();

	/**
	 * Which failures are retried and with what back-off (the queue's configured max
	 * retries, stored with each task, decide when retries are exhausted).
	 * @return the retry policy
	 */
	RetryPolicy retryPolicy();

	/**
	 * How many tasks it is running now.
	 * @return the count
	 */
	int activeTasks();

	/**
	 * Whether it claims and runs tasks.
	 * @return whether it runs
	 */
	boolean isRunning();

	/**
	 * Whether this instance owns the queue's timer.
	 * @return whether it owns the timer
	 */
	boolean isTimerOwner();

	/**
	 * Start claiming and running tasks.
	 */
	void start();

	/**
	 * Stop claiming, release the claimed tasks whose handlers have not started, interrupt
	 * the running handlers (at once, or late in the shutdown timeout without
	 * {@code interrupt-on-shutdown}) and release the tasks of those that return within
	 * the timeout without completing, so another instance runs them at once. A handler
	 * still running at the end keeps its lease.
	 */
	void stop();

}

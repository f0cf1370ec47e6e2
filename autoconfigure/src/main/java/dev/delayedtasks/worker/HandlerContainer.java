package dev.delayedtasks.worker;

/**
 * One running (or stopped) {@code @DelayedTaskHandler} on this instance, as
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
	 * Stop claiming, let running tasks finish within the shutdown timeout, and release
	 * the rest so another instance runs them at once.
	 */
	void stop();

}

package dev.delayedtasks.internal.worker;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Makes the threads a queue's container owns, each named
 * {@code delayed-tasks-<role>-<queue>-<n>}: the dispatcher, the tick reader, the timer,
 * the heartbeat, the completion thread and the thread that stops the container. They are
 * the queue's own, never shared with another queue, so a Redis node that stalls delays
 * only the queues it holds; handler runs and handler timeouts run on the shared executor
 * and scheduler the {@link HandlerContainerFactory} is given instead.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class QueueThreads {

	private final String queue;

	/** One factory per role, so numbers go on counting when a container restarts. */
	private final Map<String, CustomizableThreadFactory> factories = new ConcurrentHashMap<>();

	QueueThreads(String queue) {
		this.queue = queue;
	}

	/**
	 * Start a thread of the queue's own.
	 * @param role what it does, for its name
	 * @param task what it runs
	 * @param daemon whether it lets the JVM exit while it runs
	 * @return the started thread
	 */
	Thread start(String role, Runnable task, boolean daemon) {
		Thread thread = factory(role).newThread(task);
		thread.setDaemon(daemon);
		thread.start();
		return thread;
	}

	/**
	 * A scheduler on one daemon thread of the queue's own; its owner shuts it down.
	 * @param role what it does, for its thread's name
	 * @return the scheduler
	 */
	ScheduledExecutorService scheduler(String role) {
		CustomizableThreadFactory factory = factory(role);
		return Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = factory.newThread(task);
			thread.setDaemon(true);
			return thread;
		});
	}

	private CustomizableThreadFactory factory(String role) {
		return this.factories.computeIfAbsent(role,
				(name) -> new CustomizableThreadFactory("delayed-tasks-" + name + "-" + this.queue + "-"));
	}

}

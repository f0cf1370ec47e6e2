package dev.delayedtasks.worker;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.internal.worker.HandlerContainerFactory;
import dev.delayedtasks.internal.worker.HandlerEndpoint;
import dev.delayedtasks.internal.worker.QueueWorker;

import org.springframework.beans.factory.BeanInitializationException;
import org.springframework.context.SmartLifecycle;

/**
 * The {@code @DelayedTaskHandler}s of this instance: starts them with the application
 * (those with {@code autoStartup}), stops them first on shutdown, and lets applications
 * start, stop and inspect them by id, like Spring Kafka's listener endpoint registry.
 * Each handler's container is made by the {@link HandlerContainerFactory}. Pausing and
 * resuming a queue, which acts on every instance, is
 * {@link dev.delayedtasks.QueueControl}'s.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class DelayedTaskHandlerRegistry implements SmartLifecycle {

	/**
	 * Stops before the Redis connection factory and the web server, starts after them.
	 */
	public static final int PHASE = Integer.MAX_VALUE - 100;

	/**
	 * The bean name under which the annotation post-processor finds the registry.
	 */
	public static final String BEAN_NAME = "delayedTaskHandlerRegistry";

	/**
	 * The bean name of the executor handlers run on: any
	 * {@link java.util.concurrent.Executor} (Spring's {@code AsyncTaskExecutor}
	 * implementations included) declared under this name replaces the default.
	 */
	public static final String HANDLER_EXECUTOR_BEAN_NAME = "delayedTasksHandlerExecutor";

	/**
	 * The bean name of the {@link org.springframework.scheduling.TaskScheduler} handler
	 * timeouts and local lease checks fire on: a scheduler declared under this name
	 * replaces the default. Its tasks are short and never wait on Redis; do not share it
	 * with work that blocks.
	 */
	public static final String TASK_SCHEDULER_BEAN_NAME = "delayedTasksTaskScheduler";

	private final HandlerContainerFactory containerFactory;

	private final Map<String, HandlerEndpoint> endpoints = new LinkedHashMap<>();

	/**
	 * Read by metrics for every queue: computed once, at registration.
	 */
	private final Map<String, HandlerEndpoint> endpointsByQueue = new ConcurrentHashMap<>();

	private final Map<String, QueueWorker> workers = new LinkedHashMap<>();

	private volatile boolean running;

	/**
	 * Create a registry.
	 * @param containerFactory creates the container of each handler, resolving what its
	 * annotation leaves open
	 */
	public DelayedTaskHandlerRegistry(HandlerContainerFactory containerFactory) {
		this.containerFactory = containerFactory;
	}

	/**
	 * Add a handler. Called by the annotation post-processor once all singletons exist.
	 * @param endpoint the handler
	 * @throws BeanInitializationException if its id or queue is taken by another handler
	 */
	public synchronized void register(HandlerEndpoint endpoint) {
		for (HandlerEndpoint other : this.endpoints.values()) {
			if (other.queue().equals(endpoint.queue())) {
				throw new BeanInitializationException("@DelayedTaskHandler " + endpoint + " handles queue '"
						+ endpoint.queue() + "', which " + other + " handles already: one handler per queue");
			}
		}
		if (this.endpoints.containsKey(endpoint.id())) {
			throw new BeanInitializationException("@DelayedTaskHandler " + endpoint + " has the id '" + endpoint.id()
					+ "' of " + this.endpoints.get(endpoint.id()) + ": handler ids must be unique");
		}
		this.endpoints.put(endpoint.id(), endpoint);
		this.endpointsByQueue.put(endpoint.queue(), endpoint);
		if (this.running) {
			QueueWorker worker = createContainer(endpoint);
			this.workers.put(endpoint.id(), worker);
			if (endpoint.autoStartup()) {
				worker.start();
			}
		}
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		for (HandlerEndpoint endpoint : this.endpoints.values()) {
			QueueWorker worker = createContainer(endpoint);
			this.workers.put(endpoint.id(), worker);
			if (endpoint.autoStartup()) {
				worker.start();
			}
		}
	}

	private QueueWorker createContainer(HandlerEndpoint endpoint) {
		return this.containerFactory.createContainer(endpoint);
	}

	@Override
	public void stop() {
		List<QueueWorker> toStop;
		synchronized (this) {
			if (!this.running) {
				return;
			}
			this.running = false;
			toStop = new ArrayList<>(this.workers.values());
			this.workers.clear();
		}
		// In parallel, so the whole shutdown stays within one shutdown timeout.
		List<Thread> stoppers = toStop.stream().map(QueueWorker::stopInBackground).toList();
		for (Thread stopper : stoppers) {
			try {
				stopper.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				break;
			}
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

	/**
	 * A handler by id.
	 * @param id the handler id
	 * @return the handler, empty when unknown or the registry is not running
	 */
	public synchronized Optional<HandlerContainer> getHandler(String id) {
		return Optional.ofNullable(this.workers.get(id));
	}

	/**
	 * Every handler of this instance.
	 * @return the handlers
	 */
	public synchronized Collection<HandlerContainer> getHandlers() {
		return List.copyOf(this.workers.values());
	}

	/**
	 * The registered handlers' endpoints, running or not.
	 * @return the endpoints
	 */
	public synchronized Collection<HandlerEndpoint> getEndpoints() {
		return List.copyOf(this.endpoints.values());
	}

	/**
	 * This instance's handler of a queue, running or not.
	 * @param queue the queue
	 * @return the handler's endpoint, or empty when this instance has none for the queue
	 */
	public Optional<HandlerEndpoint> getEndpointForQueue(String queue) {
		return Optional.ofNullable(this.endpointsByQueue.get(queue));
	}

}

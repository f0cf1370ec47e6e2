package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Function;

import dev.delayedtasks.internal.store.LeaseHolders;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskHandoffs;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.util.Assert;
import org.springframework.util.function.SingletonSupplier;

/**
 * Creates the container that runs a {@link HandlerEndpoint} on this instance, resolving
 * what the endpoint leaves open from the queue's configuration: concurrency, timeout and
 * retry policy, like Spring Kafka's {@code ConcurrentKafkaListenerContainerFactory} fills
 * a listener endpoint's defaults when it creates its container. A retry policy named by
 * the endpoint is looked up as a bean then, once every singleton exists.
 * <p>
 * Built with {@link #builder()}; every instance of the application shares one.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class HandlerContainerFactory {

	private static final Log logger = LogFactory.getLog(HandlerContainerFactory.class);

	private final TaskStore store;

	private final SingletonSupplier<BlockingConnections> connections;

	private final WorkerSettings settings;

	private final StoreSettings storeSettings;

	private final PayloadCodec codec;

	private final FailureRouter failureRouter;

	private final Listeners listeners;

	private final RunObservations observations;

	private final Function<String, QueueDefaults> queueDefaults;

	private final @Nullable BeanFactory beanFactory;

	private final Executor handlerExecutor;

	private final TaskScheduler taskScheduler;

	private final OccurrenceGate occurrenceGate;

	private final @Nullable TaskHandoffs handoffs;

	private final String instanceId = LeaseHolders.newInstanceId();

	private final ClaimLoopNonces loopNonces = new ClaimLoopNonces(this.instanceId);

	private HandlerContainerFactory(Builder builder) {
		Assert.state(builder.store != null, "A TaskStore is required");
		Assert.state(builder.connectionFactory != null, "A RedisConnectionFactory is required");
		Assert.state(builder.settings != null, "WorkerSettings are required");
		Assert.state(builder.storeSettings != null, "StoreSettings are required");
		Assert.state(builder.codec != null, "A PayloadCodec is required");
		Assert.state(builder.failureRouter != null, "A FailureRouter is required");
		Assert.state(builder.queueDefaults != null, "Queue defaults are required");
		Assert.state(builder.handlerExecutor != null, "A handler executor is required");
		Assert.state(builder.taskScheduler != null, "A task scheduler is required");
		this.store = builder.store;
		RedisConnectionFactory connectionFactory = builder.connectionFactory;
		// Only when a handler starts: a producer that registers no handler never needs
		// Lettuce.
		this.connections = SingletonSupplier.of(() -> new BlockingConnections(connectionFactory));
		this.settings = builder.settings;
		this.storeSettings = builder.storeSettings;
		this.codec = builder.codec;
		this.failureRouter = builder.failureRouter;
		this.listeners = builder.listeners;
		this.observations = builder.observations;
		this.queueDefaults = builder.queueDefaults;
		this.beanFactory = builder.beanFactory;
		this.handlerExecutor = builder.handlerExecutor;
		this.taskScheduler = builder.taskScheduler;
		this.occurrenceGate = builder.occurrenceGate;
		this.handoffs = builder.handoffs;
	}

	/**
	 * Start building a factory.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * This instance's id: the one that names it as a queue's timer owner.
	 * @return the id
	 */
	public String instanceId() {
		return this.instanceId;
	}

	/**
	 * Create the container of a handler, not started.
	 * @param endpoint the handler
	 * @return the container
	 */
	public QueueWorker createContainer(HandlerEndpoint endpoint) {
		WorkerServices services = new WorkerServices(this.store, this.connections.obtain(), this.settings,
				this.storeSettings, this.codec, this.failureRouter, this.listeners, this.instanceId,
				this.handlerExecutor, this.taskScheduler, this.observations, this.occurrenceGate, this.handoffs,
				this.loopNonces);
		return new QueueWorker(endpoint, resolve(endpoint), services);
	}

	/**
	 * The endpoint's attributes, each from the annotation if it sets it, else from the
	 * queue's configuration.
	 * @param endpoint the endpoint
	 * @return the resolved settings
	 */
	ContainerSettings resolve(HandlerEndpoint endpoint) {
		QueueDefaults defaults = this.queueDefaults.apply(endpoint.queue());
		int concurrency = (endpoint.concurrency() != null) ? endpoint.concurrency() : defaults.concurrency();
		Duration timeout = (endpoint.timeout() != null) ? endpoint.timeout() : defaults.timeout();
		String policyBean = endpoint.retryPolicyBeanName();
		RetryPolicy retryPolicy = (policyBean != null) ? retryPolicyBean(endpoint, policyBean, defaults)
				: defaults.retryPolicy();
		return new ContainerSettings(concurrency, timeout, retryPolicy, defaults.limits());
	}

	/**
	 * The retry policy bean an endpoint names. Its back-off and its choice of retryable
	 * exceptions apply; the max attempts of the queue's tasks stay those of the queue's
	 * configuration, which producers store with each task whether or not they host the
	 * handler. A policy that allows a different number of retries gets a warning, since
	 * its limit is not the one that applies.
	 * @param endpoint the endpoint, for the messages
	 * @param name the bean name
	 * @param defaults the queue's defaults
	 * @return the retry policy bean
	 */
	private RetryPolicy retryPolicyBean(HandlerEndpoint endpoint, String name, QueueDefaults defaults) {
		Assert.state(this.beanFactory != null,
				() -> "No BeanFactory to look up the retry policy bean '" + name + "' of " + endpoint);
		RetryPolicy policy = this.beanFactory.getBean(name, RetryPolicy.class);
		int policyRetries = FailureRouter.maxRetries(policy);
		if (policyRetries != defaults.maxRetries()) {
			logger.warn("@DelayedTaskHandler " + endpoint + " names the retry policy bean '" + name + "', which allows "
					+ policyRetries + " retries, but queue '" + endpoint.queue() + "' is configured for "
					+ defaults.maxRetries() + " (delayed-tasks.queues." + endpoint.queue()
					+ ".retry.max-retries, else delayed-tasks.retry.max-retries). Every instance schedules the queue's "
					+ "tasks with " + (defaults.maxRetries() + 1) + " attempts; the policy decides only the back-off "
					+ "and which exceptions are retried. Set the property to " + policyRetries
					+ " to make them agree.");
		}
		return policy;
	}

	/**
	 * Builds a {@link HandlerContainerFactory}.
	 */
	public static final class Builder {

		private @Nullable TaskStore store;

		private @Nullable RedisConnectionFactory connectionFactory;

		private @Nullable WorkerSettings settings;

		private @Nullable StoreSettings storeSettings;

		private @Nullable PayloadCodec codec;

		private @Nullable FailureRouter failureRouter;

		private Listeners listeners = new Listeners(List.of());

		private RunObservations observations = new RunObservations(ObservationRegistry.NOOP, null);

		private OccurrenceGate occurrenceGate = OccurrenceGate.OPEN;

		private @Nullable Function<String, QueueDefaults> queueDefaults;

		private @Nullable BeanFactory beanFactory;

		private @Nullable Executor handlerExecutor;

		private @Nullable TaskScheduler taskScheduler;

		private @Nullable TaskHandoffs handoffs;

		private Builder() {
		}

		/**
		 * Let dispatchers take the ready tasks that this process's blocking
		 * {@code schedule} calls create, leased by those calls and handed to the handler
		 * executor on the scheduling thread: only with an executor that never runs a task
		 * on the calling thread. Without it, every task is claimed.
		 * @param handoffs where dispatchers offer to take tasks
		 * @return this builder
		 */
		public Builder taskHandoffs(TaskHandoffs handoffs) {
			this.handoffs = handoffs;
			return this;
		}

		/**
		 * Set the executor handlers run on, for every queue. The permits of each queue
		 * bound how many of its handlers run at once, so it needs no bound of its own; a
		 * bounded one makes queues wait for each other. It must accept tasks until the
		 * registry has stopped.
		 * @param handlerExecutor the executor
		 * @return this builder
		 */
		public Builder handlerExecutor(Executor handlerExecutor) {
			this.handlerExecutor = handlerExecutor;
			return this;
		}

		/**
		 * Set the scheduler handler timeouts and local lease checks fire on. Its tasks
		 * are short and never wait on Redis.
		 * @param taskScheduler the scheduler
		 * @return this builder
		 */
		public Builder taskScheduler(TaskScheduler taskScheduler) {
			this.taskScheduler = taskScheduler;
			return this;
		}

		/**
		 * Set the task store containers claim from and complete in.
		 * @param store the store
		 * @return this builder
		 */
		public Builder store(TaskStore store) {
			this.store = store;
			return this;
		}

		/**
		 * Set the Lettuce connection factory the blocking connections of dispatchers and
		 * timers are opened from (only once a handler starts).
		 * @param connectionFactory the connection factory
		 * @return this builder
		 */
		public Builder connectionFactory(RedisConnectionFactory connectionFactory) {
			this.connectionFactory = connectionFactory;
			return this;
		}

		/**
		 * Set how workers run.
		 * @param settings the settings
		 * @return this builder
		 */
		public Builder workerSettings(WorkerSettings settings) {
			this.settings = settings;
			return this;
		}

		/**
		 * Set the key layout and script limits.
		 * @param storeSettings the settings
		 * @return this builder
		 */
		public Builder storeSettings(StoreSettings storeSettings) {
			this.storeSettings = storeSettings;
			return this;
		}

		/**
		 * Set the payload codec.
		 * @param codec the codec
		 * @return this builder
		 */
		public Builder codec(PayloadCodec codec) {
			this.codec = codec;
			return this;
		}

		/**
		 * Set what decides about failed runs.
		 * @param failureRouter the router
		 * @return this builder
		 */
		public Builder failureRouter(FailureRouter failureRouter) {
			this.failureRouter = failureRouter;
			return this;
		}

		/**
		 * Set the listeners told about runs (none by default).
		 * @param listeners the listeners
		 * @return this builder
		 */
		public Builder listeners(Listeners listeners) {
			this.listeners = listeners;
			return this;
		}

		/**
		 * Set what observes handler runs (nothing by default).
		 * @param observations the observations
		 * @return this builder
		 */
		public Builder observations(RunObservations observations) {
			this.observations = observations;
			return this;
		}

		/**
		 * Set what decides whether a recurring occurrence runs (every task runs by
		 * default).
		 * @param occurrenceGate the gate
		 * @return this builder
		 */
		public Builder occurrenceGate(OccurrenceGate occurrenceGate) {
			this.occurrenceGate = occurrenceGate;
			return this;
		}

		/**
		 * Set each queue's configuration, for what handlers leave open.
		 * @param queueDefaults the configuration of a queue, by queue name
		 * @return this builder
		 */
		public Builder queueDefaults(Function<String, QueueDefaults> queueDefaults) {
			this.queueDefaults = queueDefaults;
			return this;
		}

		/**
		 * Set the bean factory retry policy beans named by handlers are looked up in.
		 * @param beanFactory the bean factory
		 * @return this builder
		 */
		public Builder beanFactory(BeanFactory beanFactory) {
			this.beanFactory = beanFactory;
			return this;
		}

		/**
		 * Build the factory.
		 * @return the factory
		 * @throws IllegalStateException if a required collaborator is missing
		 */
		public HandlerContainerFactory build() {
			return new HandlerContainerFactory(this);
		}

	}

}

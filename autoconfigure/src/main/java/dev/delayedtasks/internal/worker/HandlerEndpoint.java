package dev.delayedtasks.internal.worker;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * One {@code @DelayedTaskHandler} method as its annotation declares it: where to call it
 * and the attributes the annotation sets. An attribute the annotation leaves open stays
 * {@code null} here; the {@link HandlerContainerFactory} fills it from the queue's
 * configuration when it creates the handler's container, as Spring Kafka's container
 * factory does for a listener endpoint.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class HandlerEndpoint {

	private final String id;

	private final String queue;

	private final HandlerMethod method;

	private final @Nullable Integer concurrency;

	private final @Nullable Duration timeout;

	private final @Nullable String retryPolicyBeanName;

	private final boolean autoStartup;

	private HandlerEndpoint(Builder builder) {
		this.id = builder.id;
		this.queue = builder.queue;
		this.method = builder.method;
		this.concurrency = builder.concurrency;
		this.timeout = builder.timeout;
		this.retryPolicyBeanName = builder.retryPolicyBeanName;
		this.autoStartup = builder.autoStartup;
	}

	/**
	 * Start describing a handler.
	 * @param id the handler id
	 * @param queue the queue it runs
	 * @param method the method to call
	 * @return a builder
	 */
	public static Builder builder(String id, String queue, HandlerMethod method) {
		return new Builder(id, queue, method);
	}

	/**
	 * The handler id.
	 * @return the id
	 */
	public String id() {
		return this.id;
	}

	/**
	 * The queue whose tasks the handler runs.
	 * @return the queue
	 */
	public String queue() {
		return this.queue;
	}

	/**
	 * The method to call.
	 * @return the method
	 */
	public HandlerMethod method() {
		return this.method;
	}

	/**
	 * How many tasks run at once on this instance, as the annotation sets it.
	 * @return the concurrency, or {@code null} for the queue's configured one
	 */
	public @Nullable Integer concurrency() {
		return this.concurrency;
	}

	/**
	 * The longest run, as the annotation sets it.
	 * @return the timeout, or {@code null} for the queue's configured one (if any)
	 */
	public @Nullable Duration timeout() {
		return this.timeout;
	}

	/**
	 * The name of the {@link org.springframework.core.retry.RetryPolicy} bean the
	 * annotation names.
	 * @return the bean name, or {@code null} for the queue's configured policy
	 */
	public @Nullable String retryPolicyBeanName() {
		return this.retryPolicyBeanName;
	}

	/**
	 * Whether the handler starts with the application.
	 * @return whether it starts with the application
	 */
	public boolean autoStartup() {
		return this.autoStartup;
	}

	@Override
	public String toString() {
		return this.id + " (queue '" + this.queue + "', " + this.method + ")";
	}

	/**
	 * Builds a {@link HandlerEndpoint}; every attribute not set is left to the queue's
	 * configuration.
	 */
	public static final class Builder {

		private final String id;

		private final String queue;

		private final HandlerMethod method;

		private @Nullable Integer concurrency;

		private @Nullable Duration timeout;

		private @Nullable String retryPolicyBeanName;

		private boolean autoStartup = true;

		private Builder(String id, String queue, HandlerMethod method) {
			this.id = id;
			this.queue = queue;
			this.method = method;
		}

		/**
		 * Set how many tasks run at once on this instance.
		 * @param concurrency at least 1, or {@code null} for the queue's configured one
		 * @return this builder
		 */
		public Builder concurrency(@Nullable Integer concurrency) {
			Assert.isTrue(concurrency == null || concurrency >= 1, "concurrency must be at least 1");
			this.concurrency = concurrency;
			return this;
		}

		/**
		 * Set the longest run.
		 * @param timeout a positive duration, or {@code null} for the queue's configured
		 * one
		 * @return this builder
		 */
		public Builder timeout(@Nullable Duration timeout) {
			Assert.isTrue(timeout == null || (!timeout.isNegative() && !timeout.isZero()), "timeout must be positive");
			this.timeout = timeout;
			return this;
		}

		/**
		 * Name the retry policy bean.
		 * @param retryPolicyBeanName the bean name, or {@code null} for the queue's
		 * configured policy
		 * @return this builder
		 */
		public Builder retryPolicyBeanName(@Nullable String retryPolicyBeanName) {
			this.retryPolicyBeanName = retryPolicyBeanName;
			return this;
		}

		/**
		 * Set whether the handler starts with the application ({@code true} unless set).
		 * @param autoStartup whether it starts with the application
		 * @return this builder
		 */
		public Builder autoStartup(boolean autoStartup) {
			this.autoStartup = autoStartup;
			return this;
		}

		/**
		 * Build the endpoint.
		 * @return the endpoint
		 */
		public HandlerEndpoint build() {
			return new HandlerEndpoint(this);
		}

	}

}

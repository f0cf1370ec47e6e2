package dev.delayedtasks.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of delayed tasks, under {@code delayed-tasks}.
 *
 * @param enabled whether to enable delayed tasks
 * @param keyPrefix prefix of every Redis key; a queue's keys are
 * {@code <prefix>:{<queue>:0}:<kind>}; 1-64 letters, digits, '.', '-', '_', ':'
 * @param producer how tasks are written
 * @param worker how tasks are leased and recovered
 * @param retry default retry policy of every queue
 * @param deadLetter how long dead letters are kept
 * @param queues per-queue overrides, by queue name
 * @param snapshotInterval how often queue counts are read for metrics gauges and the
 * health indicator
 * @param evictionPolicyCheck what to do at startup when Redis's maxmemory-policy can
 * evict tasks (allkeys-*): fail, warn or off
 * @author delayed-tasks
 * @since 0.1.0
 */
@ConfigurationProperties("delayed-tasks")
public record DelayedTasksProperties(@DefaultValue("true") boolean enabled, @DefaultValue("dt") String keyPrefix,
		@DefaultValue Producer producer, @DefaultValue Worker worker, @DefaultValue Retry retry,
		@DefaultValue DeadLetter deadLetter, Map<String, Queue> queues, @DefaultValue("5s") Duration snapshotInterval,
		@DefaultValue("fail") CheckMode evictionPolicyCheck) {

	/**
	 * Create the properties.
	 */
	public DelayedTasksProperties {
		queues = (queues != null) ? Map.copyOf(queues) : Map.of();
	}

	/**
	 * The retry settings of a queue: its overrides over the global ones.
	 * @param queue the queue
	 * @return the merged settings
	 */
	public Retry retry(String queue) {
		Queue overrides = this.queues.get(queue);
		return (overrides != null && overrides.retry() != null) ? overrides.retry().over(this.retry) : this.retry;
	}

	/**
	 * The concurrency of a queue: its override, else {@code worker.concurrency}.
	 * @param queue the queue
	 * @return the concurrency
	 */
	public int concurrency(String queue) {
		Queue overrides = this.queues.get(queue);
		return (overrides != null && overrides.concurrency() != null) ? overrides.concurrency()
				: this.worker.concurrency();
	}

	/**
	 * The handler timeout of a queue, if any.
	 * @param queue the queue
	 * @return the timeout, or {@code null}
	 */
	public @Nullable Duration timeout(String queue) {
		Queue overrides = this.queues.get(queue);
		return (overrides != null) ? overrides.timeout() : null;
	}

	/**
	 * What a startup check does when it finds a problem.
	 */
	public enum CheckMode {

		/** Refuse to start. */
		FAIL,

		/** Log a warning and start. */
		WARN,

		/** Do not check. */
		OFF

	}

	/**
	 * How tasks are written.
	 *
	 * @param maxPayloadSize largest payload accepted, as serialized JSON
	 * @param batchSize most tasks sent in one script call by scheduleAll
	 */
	public record Producer(@DefaultValue("64KB") DataSize maxPayloadSize, @DefaultValue("500") int batchSize) {

	}

	/**
	 * How tasks are claimed, run, leased and recovered.
	 *
	 * @param enabled whether this instance runs @DelayedTaskHandler methods (false makes
	 * a producer-only instance)
	 * @param concurrency default number of tasks of one queue this instance runs at once
	 * @param leaseDuration how long a claimed task belongs to its worker; heartbeats
	 * extend it every third of it
	 * @param reapGrace how long past its lease deadline a task is taken back
	 * @param maxDeliveries expired leases in a row (no failure recorded between them)
	 * after which a task is dead-lettered
	 * @param shutdownTimeout how long stopping waits for running handlers before
	 * releasing their tasks to other instances; keep it below
	 * spring.lifecycle.timeout-per-shutdown-phase
	 * @param timerTtl how long a queue's timer lease lasts; another instance takes the
	 * timer over within it
	 * @param blockTimeout longest wait of an idle dispatcher on its queue's wake list
	 * @param maxClaim most tasks one claim leases
	 */
	public record Worker(@DefaultValue("true") boolean enabled, @DefaultValue("1") int concurrency,
			@DefaultValue("30s") Duration leaseDuration, @DefaultValue("5s") Duration reapGrace,
			@DefaultValue("10") int maxDeliveries, @DefaultValue("25s") Duration shutdownTimeout,
			@DefaultValue("3s") Duration timerTtl, @DefaultValue("1s") Duration blockTimeout,
			@DefaultValue("32") int maxClaim) {

	}

	/**
	 * Overrides for one queue; unset values fall back to the global ones.
	 *
	 * @param concurrency tasks of this queue this instance runs at once
	 * @param timeout longest run of this queue's handler
	 * @param retry retry overrides
	 */
	public record Queue(@Nullable Integer concurrency, @Nullable Duration timeout, @Nullable RetryOverrides retry) {

	}

	/**
	 * Retry overrides for one queue; unset values fall back to
	 * {@code delayed-tasks.retry.*}.
	 *
	 * @param maxRetries retries after the first failed run
	 * @param delay back-off before the first retry
	 * @param multiplier factor applied to the back-off after each retry
	 * @param maxDelay longest back-off
	 * @param jitter random variation of each back-off
	 */
	public record RetryOverrides(@Nullable Integer maxRetries, @Nullable Duration delay, @Nullable Double multiplier,
			@Nullable Duration maxDelay, @Nullable Duration jitter) {

		Retry over(Retry defaults) {
			return new Retry((this.maxRetries != null) ? this.maxRetries : defaults.maxRetries(),
					(this.delay != null) ? this.delay : defaults.delay(),
					(this.multiplier != null) ? this.multiplier : defaults.multiplier(),
					(this.maxDelay != null) ? this.maxDelay : defaults.maxDelay(),
					(this.jitter != null) ? this.jitter : defaults.jitter(), defaults.nonRetryableExceptions());
		}

	}

	/**
	 * Default retry policy, in Spring Framework's retry vocabulary.
	 *
	 * @param maxRetries retries after the first failed run (so a task runs at most
	 * max-retries + 1 times)
	 * @param delay back-off before the first retry
	 * @param multiplier factor applied to the back-off after each retry
	 * @param maxDelay longest back-off
	 * @param jitter random variation added to or subtracted from each back-off
	 * @param nonRetryableExceptions exception types that go to the dead letters without
	 * retries (besides NonRetryableTaskException)
	 */
	public record Retry(@DefaultValue("3") int maxRetries, @DefaultValue("1s") Duration delay,
			@DefaultValue("2") double multiplier, @DefaultValue("5m") Duration maxDelay,
			@DefaultValue("100ms") Duration jitter, List<Class<? extends Throwable>> nonRetryableExceptions) {

		/**
		 * Create the settings.
		 */
		public Retry {
			nonRetryableExceptions = (nonRetryableExceptions != null) ? List.copyOf(nonRetryableExceptions) : List.of();
		}

		/**
		 * The Spring Framework retry policy these settings describe.
		 * @return the policy
		 */
		public RetryPolicy toRetryPolicy() {
			return RetryPolicy.builder()
				.maxRetries(this.maxRetries)
				.delay(this.delay)
				.multiplier(this.multiplier)
				.maxDelay(this.maxDelay)
				.jitter(this.jitter)
				.build();
		}

	}

	/**
	 * How long dead letters are kept.
	 *
	 * @param retention age after which dead letters are deleted
	 * @param maxCount most dead letters kept per queue
	 */
	public record DeadLetter(@DefaultValue("14d") Duration retention, @DefaultValue("100000") int maxCount) {

	}

}

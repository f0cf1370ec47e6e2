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
 * Configuration of delayed tasks, under {@code delayed-tasks}. Every value is checked
 * while the properties are bound: one the library cannot honour (a concurrency of 0, a
 * zero lease, a block timeout that BLPOP would round to "for ever", ...) fails startup
 * with a message naming the property, the value and the rule.
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
 * @param includePayloadInErrors whether the library's error messages (dead letters, logs,
 * exceptions) may quote payload and header values: the start of an unreadable envelope
 * and Jackson's own messages, which repeat the values they could not convert; off by
 * default, so that no personal data ends up in them
 * @author delayed-tasks
 * @since 0.1.0
 */
@ConfigurationProperties("delayed-tasks")
public record DelayedTasksProperties(@DefaultValue("true") boolean enabled, @DefaultValue("dt") String keyPrefix,
		@DefaultValue Producer producer, @DefaultValue Worker worker, @DefaultValue Retry retry,
		@DefaultValue DeadLetter deadLetter, Map<String, Queue> queues, @DefaultValue("5s") Duration snapshotInterval,
		@DefaultValue("fail") CheckMode evictionPolicyCheck, @DefaultValue("false") boolean includePayloadInErrors) {

	/**
	 * Create the properties, checking every value.
	 * @throws IllegalArgumentException naming the property, its value and the rule when a
	 * value is invalid
	 */
	public DelayedTasksProperties {
		queues = (queues != null) ? Map.copyOf(queues) : Map.of();
		PropertyChecks checks = new PropertyChecks("delayed-tasks");
		checks.keyPrefix("key-prefix", keyPrefix);
		producer.check(checks.nested("producer"));
		worker.check(checks.nested("worker"));
		retry.check(checks.nested("retry"));
		deadLetter.check(checks.nested("dead-letter"));
		// Queue names are only known here, so each override is checked with its name.
		for (Map.Entry<String, Queue> queue : queues.entrySet()) {
			queue.getValue().check(checks.queue("queues", queue.getKey()), checks.nested("retry"), retry);
		}
		checks.atLeast("snapshot-interval", snapshotInterval, Duration.ofMillis(1),
				"it is a period in whole milliseconds");
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
	 * @param maxHeaders most headers of one task, trace headers included
	 * @param maxHeadersSize largest size of all headers of one task, names and values, as
	 * serialized JSON
	 * @param batchSize most tasks sent in one script call by scheduleAll
	 * @param batchBytes most envelope bytes sent in one script call by scheduleAll (a
	 * task larger than this goes in a call of its own)
	 */
	public record Producer(@DefaultValue("64KB") DataSize maxPayloadSize, @DefaultValue("64") int maxHeaders,
			@DefaultValue("16KB") DataSize maxHeadersSize, @DefaultValue("500") int batchSize,
			@DefaultValue("1MB") DataSize batchBytes) {

		void check(PropertyChecks checks) {
			checks.positive("max-payload-size", this.maxPayloadSize);
			checks.atLeast("max-headers", this.maxHeaders, 0);
			checks.positive("max-headers-size", this.maxHeadersSize);
			checks.atLeast("batch-size", this.batchSize, 1);
			checks.positive("batch-bytes", this.batchBytes);
		}

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
	 * @param shutdownTimeout how long stopping waits for running handlers to return; keep
	 * it below spring.lifecycle.timeout-per-shutdown-phase
	 * @param interruptOnShutdown whether running handlers are interrupted as soon as
	 * shutdown begins, so their tasks go to other instances at once (true), or may finish
	 * within shutdown-timeout and are interrupted only for its last quarter, at most 1s
	 * (false)
	 * @param timerTtl how long a queue's timer lease lasts; another instance takes the
	 * timer over within it
	 * @param blockTimeout longest wait of an idle dispatcher on its queue's wake list
	 * @param maxClaim most tasks one claim leases
	 */
	public record Worker(@DefaultValue("true") boolean enabled, @DefaultValue("1") int concurrency,
			@DefaultValue("30s") Duration leaseDuration, @DefaultValue("5s") Duration reapGrace,
			@DefaultValue("10") int maxDeliveries, @DefaultValue("25s") Duration shutdownTimeout,
			@DefaultValue("true") boolean interruptOnShutdown, @DefaultValue("3s") Duration timerTtl,
			@DefaultValue("1s") Duration blockTimeout, @DefaultValue("32") int maxClaim) {

		/**
		 * Heartbeats and timer renewals run every third of a lease, in whole
		 * milliseconds: shorter leases would make them run in a busy loop.
		 */
		private static final Duration SHORTEST_LEASE = Duration.ofMillis(3);

		/**
		 * An idle timer owner renews its lease every third of the TTL: below this the
		 * timer becomes a busy poll of Redis.
		 */
		private static final Duration SHORTEST_TIMER_TTL = Duration.ofMillis(100);

		void check(PropertyChecks checks) {
			checks.atLeast("concurrency", this.concurrency, 1);
			checks.atLeast("lease-duration", this.leaseDuration, SHORTEST_LEASE,
					"heartbeats extend leases every third of it, in whole milliseconds");
			checks.notNegative("reap-grace", this.reapGrace);
			checks.atLeast("max-deliveries", this.maxDeliveries, 1);
			checks.notNegative("shutdown-timeout", this.shutdownTimeout);
			checks.atLeast("timer-ttl", this.timerTtl, SHORTEST_TIMER_TTL,
					"the timer owner renews its lease every third of it, so a shorter TTL polls Redis in a loop");
			checks.atLeast("block-timeout", this.blockTimeout, Duration.ofMillis(1),
					"BLPOP would round a shorter wait to 0, which blocks for ever");
			checks.atLeast("max-claim", this.maxClaim, 1);
		}

	}

	/**
	 * Overrides for one queue; unset values fall back to the global ones.
	 *
	 * @param concurrency tasks of this queue this instance runs at once
	 * @param timeout longest run of this queue's handler
	 * @param retry retry overrides
	 */
	public record Queue(@Nullable Integer concurrency, @Nullable Duration timeout, @Nullable RetryOverrides retry) {

		void check(PropertyChecks checks, PropertyChecks globalRetryChecks, Retry globalRetry) {
			if (this.concurrency != null) {
				checks.atLeast("concurrency", this.concurrency, 1);
			}
			if (this.timeout != null) {
				checks.positive("timeout", this.timeout);
			}
			if (this.retry != null) {
				this.retry.check(checks.nested("retry"), globalRetryChecks, globalRetry);
			}
		}

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

		void check(PropertyChecks checks, PropertyChecks globalChecks, Retry globalRetry) {
			if (this.maxRetries != null) {
				Retry.checkMaxRetries(checks, this.maxRetries);
			}
			if (this.delay != null) {
				checks.notNegative("delay", this.delay);
			}
			if (this.multiplier != null) {
				checks.finiteAtLeast("multiplier", this.multiplier, 1);
			}
			if (this.maxDelay != null) {
				checks.positive("max-delay", this.maxDelay);
			}
			if (this.jitter != null) {
				checks.notNegative("jitter", this.jitter);
			}
			if (this.delay != null || this.maxDelay != null) {
				// Either may come from delayed-tasks.retry.*: name each where it is set.
				Retry merged = over(globalRetry);
				PropertyChecks maxDelayChecks = (this.maxDelay != null) ? checks : globalChecks;
				PropertyChecks delayChecks = (this.delay != null) ? checks : globalChecks;
				maxDelayChecks.notBelow("max-delay", merged.maxDelay(), delayChecks.name("delay"), merged.delay());
			}
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

		void check(PropertyChecks checks) {
			checkMaxRetries(checks, this.maxRetries);
			checks.notNegative("delay", this.delay);
			checks.finiteAtLeast("multiplier", this.multiplier, 1);
			checks.positive("max-delay", this.maxDelay);
			checks.notBelow("max-delay", this.maxDelay, checks.name("delay"), this.delay);
			checks.notNegative("jitter", this.jitter);
		}

		static void checkMaxRetries(PropertyChecks checks, int maxRetries) {
			checks.between("max-retries", maxRetries, 0, Integer.MAX_VALUE - 1,
					"a task runs at most max-retries + 1 times");
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

		void check(PropertyChecks checks) {
			// The scripts read 0 as "no limit", the opposite of what 0 seems to say.
			checks.atLeast("retention", this.retention, Duration.ofMillis(1), "0 would keep dead letters for ever");
			checks.atLeast("max-count", this.maxCount, 1, "0 would keep any number of dead letters");
		}

	}

}

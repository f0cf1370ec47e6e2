package dev.delayedtasks.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.retry.RetryPolicySettings;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of delayed tasks, under {@code delayed-tasks}. Every value is checked
 * while the properties are bound: one the library cannot honour (a concurrency of 0, a
 * zero lease, a block timeout that BLPOP would round to "for ever", ...) fails startup
 * with a message naming the property, the value and the rule.
 *
 * @param enabled Whether to enable delayed tasks.
 * @param keyPrefix Prefix of every Redis key, 1-64 letters, digits, '.', '-', '_' or ':'.
 * A queue's keys start with the prefix and the queue's hash tag, such as
 * dt:{emails:0}:ready.
 * @param producer How tasks are written.
 * @param worker How tasks are leased, run and recovered.
 * @param retry Default retry policy of every queue.
 * @param deadLetter How long dead letters are kept.
 * @param queues Per-queue overrides, by queue name: concurrency, timeout and retry.*
 * (max-retries, delay, multiplier, max-delay, jitter, exception-includes,
 * exception-excludes). Unset values fall back to the global ones. Each name also declares
 * the queue (see producer.declared-queues-only); an empty value, such as
 * delayed-tasks.queues.audit=, declares one without overrides.
 * @param snapshotInterval How often queue counts are read for the metrics gauges and the
 * health indicator.
 * @param monitoring How many queues the metrics, the health indicator and the Actuator
 * endpoint report.
 * @param evictionPolicyCheck What to do at startup when Redis's maxmemory-policy can
 * evict tasks (allkeys-*).
 * @param includePayloadInErrors Whether the library's error messages (dead letters, logs,
 * exceptions) may quote payload and header values: the start of an unreadable envelope
 * and Jackson's own messages, which repeat the values they could not convert. Off by
 * default, so that no personal data ends up in them.
 * @param scripts How the Lua scripts are sent to Redis.
 * @param results How long task outcomes and handler results are kept.
 * @param luaSandboxCheck What to do at startup when a Redis master predates the fixes for
 * the Lua sandbox vulnerabilities of October 2025 (CVE-2025-49844 and others).
 * @author delayed-tasks
 * @since 0.1.0
 */
@ConfigurationProperties("delayed-tasks")
public record DelayedTasksProperties(@DefaultValue("true") boolean enabled, @DefaultValue("dt") String keyPrefix,
		@DefaultValue Producer producer, @DefaultValue Worker worker, @DefaultValue Retry retry,
		@DefaultValue DeadLetter deadLetter, Map<String, Queue> queues, @DefaultValue("5s") Duration snapshotInterval,
		@DefaultValue Monitoring monitoring, @DefaultValue("fail") CheckMode evictionPolicyCheck,
		@DefaultValue("false") boolean includePayloadInErrors, @DefaultValue Scripts scripts,
		@DefaultValue Results results, @DefaultValue("warn") CheckMode luaSandboxCheck) {

	/**
	 * Create the properties, checking every value.
	 * @param enabled Whether to enable delayed tasks.
	 * @param keyPrefix Prefix of every Redis key, 1-64 letters, digits, '.', '-', '_' or
	 * ':'. A queue's keys start with the prefix and the queue's hash tag, such as
	 * dt:{emails:0}:ready.
	 * @param producer How tasks are written.
	 * @param worker How tasks are leased, run and recovered.
	 * @param retry Default retry policy of every queue.
	 * @param deadLetter How long dead letters are kept.
	 * @param queues Per-queue overrides, by queue name: concurrency, timeout and retry.*
	 * (max-retries, delay, multiplier, max-delay, jitter, exception-includes,
	 * exception-excludes). Unset values fall back to the global ones.
	 * @param snapshotInterval How often queue counts are read for the metrics gauges and
	 * the health indicator.
	 * @param evictionPolicyCheck What to do at startup when Redis's maxmemory-policy can
	 * evict tasks (allkeys-*).
	 * @param includePayloadInErrors Whether the library's error messages (dead letters,
	 * logs, exceptions) may quote payload and header values: the start of an unreadable
	 * envelope and Jackson's own messages, which repeat the values they could not
	 * convert. Off by default, so that no personal data ends up in them.
	 * @param monitoring How many queues the metrics, the health indicator and the
	 * Actuator endpoint report.
	 * @param scripts How the Lua scripts are sent to Redis.
	 * @param results How long task outcomes and handler results are kept.
	 * @param luaSandboxCheck What to do at startup when a Redis master predates the fixes
	 * for the Lua sandbox vulnerabilities of October 2025 (CVE-2025-49844 and others).
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
		monitoring.check(checks.nested("monitoring"));
		scripts.check(checks.nested("scripts"));
		results.check(checks.nested("results"));
	}

	/**
	 * How long the outcome of a queue's tasks is kept: its override, else
	 * {@code results.retention}.
	 * @param queue the queue
	 * @return the retention, zero for none
	 */
	public Duration resultsRetention(String queue) {
		Queue overrides = this.queues.get(queue);
		return (overrides != null && overrides.results() != null && overrides.results().retention() != null)
				? overrides.results().retention() : this.results.retention();
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
	 * The configured flow control of a queue.
	 * @param queue the queue
	 * @return its limits, {@link QueueLimits#NONE} when none is configured
	 */
	public QueueLimits limits(String queue) {
		Queue overrides = this.queues.get(queue);
		return (overrides != null)
				? new QueueLimits(overrides.rateLimit(), overrides.globalConcurrency(), overrides.keyRateLimit())
				: QueueLimits.NONE;
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
	 * @param maxPayloadSize Largest payload accepted, as serialized JSON.
	 * @param maxHeaders Most headers of one task, trace headers included.
	 * @param maxHeadersSize Largest size of all headers of one task, names and values, as
	 * serialized JSON.
	 * @param batchSize Most tasks sent in one script call by scheduleAll, and by
	 * concurrent or asynchronous schedule calls that share one.
	 * @param batchBytes Most envelope bytes sent in one such script call (a task larger
	 * than this goes in a call of its own).
	 * @param afterCommit Whether tasks scheduled inside a Spring-managed transaction are
	 * sent only when it commits (never when it rolls back), unless a request says
	 * afterCommit(false). Outside a transaction tasks are sent at once either way.
	 * @param declaredQueuesOnly Whether scheduling to a queue that is neither declared
	 * under delayed-tasks.queues nor handled by a @DelayedTaskHandler of this application
	 * fails. When false, the first task of such a queue logs a warning.
	 * @param outageBuffer How the asynchronous calls that store one task ride out a Redis
	 * outage.
	 */
	public record Producer(@DefaultValue("64KB") DataSize maxPayloadSize, @DefaultValue("64") int maxHeaders,
			@DefaultValue("16KB") DataSize maxHeadersSize, @DefaultValue("500") int batchSize,
			@DefaultValue("1MB") DataSize batchBytes, @DefaultValue("false") boolean afterCommit,
			@DefaultValue("false") boolean declaredQueuesOnly, @DefaultValue OutageBuffer outageBuffer) {

		void check(PropertyChecks checks) {
			checks.positive("max-payload-size", this.maxPayloadSize);
			checks.atLeast("max-headers", this.maxHeaders, 0);
			checks.positive("max-headers-size", this.maxHeadersSize);
			checks.atLeast("batch-size", this.batchSize, 1);
			checks.positive("batch-bytes", this.batchBytes);
			this.outageBuffer.check(checks.nested("outage-buffer"));
		}

	}

	/**
	 * How scheduleAsync, submitAsync and the reactive enqueue and schedule ride out a
	 * Redis outage. Held tasks live in this process's memory only: they are lost if it
	 * stops. The blocking calls, scheduleAllAsync, cancel and find fail at once either
	 * way.
	 *
	 * @param enabled Whether tasks submitted while Redis is unreachable are held in
	 * memory and sent, in order, when it is back. When false, such a call fails as soon
	 * as its Redis call does.
	 * @param maxTasks Most tasks accepted and not yet stored, outage or not; a submission
	 * beyond it fails at once.
	 * @param maxWait How long a held task waits for Redis before its call fails.
	 * @param shutdownWait How long stopping the application waits for the tasks accepted
	 * and not yet stored (held ones included, buffer enabled or not); each task left then
	 * fails its call and is reported with its id (a warning, the listener's
	 * storeAbandoned, the delayed.tasks.producer.abandoned counter).
	 */
	public record OutageBuffer(@DefaultValue("false") boolean enabled, @DefaultValue("10000") int maxTasks,
			@DefaultValue("30s") Duration maxWait, @DefaultValue("5s") Duration shutdownWait) {

		void check(PropertyChecks checks) {
			checks.atLeast("max-tasks", this.maxTasks, 1);
			checks.positive("max-wait", this.maxWait);
			checks.notNegative("shutdown-wait", this.shutdownWait);
		}

	}

	/**
	 * How tasks are claimed, run, leased and recovered.
	 *
	 * @param enabled Whether this instance runs @DelayedTaskHandler methods. False makes
	 * a producer-only instance.
	 * @param concurrency Default number of tasks of one queue that this instance runs at
	 * once.
	 * @param leaseDuration How long a claimed task belongs to its worker. Heartbeats
	 * extend it every third of it.
	 * @param reapGrace How long past its lease deadline a task is taken back.
	 * @param maxDeliveries Expired leases in a row, with no failure recorded between
	 * them, after which a task is dead-lettered.
	 * @param shutdownTimeout How long stopping waits for running handlers to return. Keep
	 * it below spring.lifecycle.timeout-per-shutdown-phase.
	 * @param interruptOnShutdown Whether running handlers are interrupted as soon as
	 * shutdown begins, so that their tasks go to other instances at once. When false,
	 * they may finish within shutdown-timeout and are interrupted only for its last
	 * quarter, at most 1s.
	 * @param timerTtl How long a queue's timer lease lasts. Another instance takes the
	 * timer over within it.
	 * @param blockTimeout Longest wait of an idle dispatcher on its queue's wake list.
	 * @param maxClaim Most tasks that one claim leases.
	 * @param handOff Whether a blocking schedule call of this instance leases the ready
	 * tasks it creates for this instance's handlers of their queue when these have room,
	 * and hands them over on the calling thread, instead of waking a dispatcher to claim
	 * them. Only with the library's own handler executor.
	 */
	public record Worker(@DefaultValue("true") boolean enabled, @DefaultValue("1") int concurrency,
			@DefaultValue("30s") Duration leaseDuration, @DefaultValue("5s") Duration reapGrace,
			@DefaultValue("10") int maxDeliveries, @DefaultValue("25s") Duration shutdownTimeout,
			@DefaultValue("true") boolean interruptOnShutdown, @DefaultValue("3s") Duration timerTtl,
			@DefaultValue("1s") Duration blockTimeout, @DefaultValue("32") int maxClaim,
			@DefaultValue("true") boolean handOff) {

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
	 * @param concurrency Number of tasks of this queue that this instance runs at once.
	 * @param timeout Longest run of this queue's handler, after which it is interrupted.
	 * @param retry Retry overrides.
	 * @param results Results overrides.
	 * @param rateLimit Most task starts of this queue in any span of the window, across
	 * all instances, written count/window (for example 100/1s). Enforced by Redis: a
	 * sliding window in Redis time. Initial value: a change at run time lasts until an
	 * instance starts with a different configured value.
	 * @param globalConcurrency Most tasks of this queue leased at once across all
	 * instances. Initial value, as for rate-limit.
	 * @param keyRateLimit Most starts of this queue's tasks with one rate key
	 * (TaskRequest.rateKey) in any span of the window, for every key apart, across all
	 * instances, written count/window (for example 10/1s). Initial value, as for
	 * rate-limit.
	 */
	public record Queue(@Nullable Integer concurrency, @Nullable Duration timeout, @Nullable RetryOverrides retry,
			@Nullable QueueResults results, @Nullable RateLimit rateLimit, @Nullable Integer globalConcurrency,
			@Nullable RateLimit keyRateLimit) {

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
			if (this.results != null && this.results.retention() != null) {
				checks.nested("results").notNegative("retention", this.results.retention());
			}
			if (this.globalConcurrency != null) {
				checks.atLeast("global-concurrency", this.globalConcurrency, 1);
			}
		}

	}

	/**
	 * Results overrides for one queue.
	 *
	 * @param retention How long the outcome of this queue's tasks is kept; unset falls
	 * back to delayed-tasks.results.retention.
	 */
	public record QueueResults(@Nullable Duration retention) {

	}

	/**
	 * How long task outcomes and handler results are kept in Redis after a task ends.
	 *
	 * @param retention How long the outcome of every task (how it ended, its runs, its
	 * error or the handler's return value) is kept, for scheduler.outcome(queue, id) on
	 * any instance. 0 keeps none, and costs nothing.
	 * @param trackedRetention How long the outcome of a tracked task (scheduler.track) is
	 * kept at least, so that its producer reads it after a disconnection or a restart.
	 * @param maxSize Largest handler result kept, as JSON. A larger one fails the run as
	 * non-retryable.
	 */
	public record Results(@DefaultValue("0s") Duration retention, @DefaultValue("1h") Duration trackedRetention,
			@DefaultValue("64KB") DataSize maxSize) {

		void check(PropertyChecks checks) {
			checks.notNegative("retention", this.retention);
			checks.positive("tracked-retention", this.trackedRetention);
			checks.positive("max-size", this.maxSize);
		}

	}

	/**
	 * Retry overrides for one queue; unset values fall back to
	 * {@code delayed-tasks.retry.*}.
	 *
	 * @param maxRetries Retries after the first failed run.
	 * @param delay Back-off before the first retry.
	 * @param multiplier Factor applied to the back-off after each retry.
	 * @param maxDelay Longest back-off.
	 * @param jitter Random variation of each back-off.
	 * @param exceptionIncludes Comma-separated list of exception types that are retried,
	 * replacing the global list. Set it empty to retry every type that is not excluded.
	 * @param exceptionExcludes Comma-separated list of exception types that are never
	 * retried, replacing the global list. Set it empty to exclude none.
	 */
	public record RetryOverrides(@Nullable Integer maxRetries, @Nullable Duration delay, @Nullable Double multiplier,
			@Nullable Duration maxDelay, @Nullable Duration jitter,
			@Nullable List<Class<? extends Throwable>> exceptionIncludes,
			@Nullable List<Class<? extends Throwable>> exceptionExcludes) {

		Retry over(Retry defaults) {
			return new Retry((this.maxRetries != null) ? this.maxRetries : defaults.maxRetries(),
					(this.delay != null) ? this.delay : defaults.delay(),
					(this.multiplier != null) ? this.multiplier : defaults.multiplier(),
					(this.maxDelay != null) ? this.maxDelay : defaults.maxDelay(),
					(this.jitter != null) ? this.jitter : defaults.jitter(),
					(this.exceptionIncludes != null) ? this.exceptionIncludes : defaults.exceptionIncludes(),
					(this.exceptionExcludes != null) ? this.exceptionExcludes : defaults.exceptionExcludes());
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
			if (this.exceptionIncludes != null) {
				checks.exceptionTypes("exception-includes", this.exceptionIncludes);
			}
			if (this.exceptionExcludes != null) {
				checks.exceptionTypes("exception-excludes", this.exceptionExcludes);
			}
			if (this.exceptionIncludes != null || this.exceptionExcludes != null) {
				over(globalRetry).checkIncludes((this.exceptionIncludes != null) ? checks : globalChecks,
						(this.exceptionExcludes != null) ? checks : globalChecks);
			}
		}

	}

	/**
	 * Default retry policy, in the vocabulary of Spring Framework's RetryPolicy and
	 * Spring Boot's RetryPolicySettings.
	 *
	 * @param maxRetries Retries after the first failed run, so that a task runs at most
	 * max-retries + 1 times.
	 * @param delay Back-off before the first retry.
	 * @param multiplier Factor applied to the back-off after each retry.
	 * @param maxDelay Longest back-off.
	 * @param jitter Random variation added to or subtracted from each back-off.
	 * @param exceptionIncludes Comma-separated list of exception types that are retried,
	 * matched against the exception and its causes. When empty, every type that is not
	 * excluded is retried.
	 * @param exceptionExcludes Comma-separated list of exception types that are never
	 * retried but dead-lettered at once, matched against the exception and its causes.
	 * Excludes win over includes, and NonRetryableTaskException is never retried.
	 */
	public record Retry(@DefaultValue("3") int maxRetries, @DefaultValue("1s") Duration delay,
			@DefaultValue("2") double multiplier, @DefaultValue("5m") Duration maxDelay,
			@DefaultValue("100ms") Duration jitter, List<Class<? extends Throwable>> exceptionIncludes,
			List<Class<? extends Throwable>> exceptionExcludes) {

		/**
		 * Create the settings.
		 * @param maxRetries Retries after the first failed run, so that a task runs at
		 * most max-retries + 1 times.
		 * @param delay Back-off before the first retry.
		 * @param multiplier Factor applied to the back-off after each retry.
		 * @param maxDelay Longest back-off.
		 * @param jitter Random variation added to or subtracted from each back-off.
		 * @param exceptionIncludes Comma-separated list of exception types that are
		 * retried, matched against the exception and its causes. When empty, every type
		 * that is not excluded is retried.
		 * @param exceptionExcludes Comma-separated list of exception types that are never
		 * retried but dead-lettered at once, matched against the exception and its
		 * causes. Excludes win over includes, and NonRetryableTaskException is never
		 * retried.
		 */
		public Retry {
			exceptionIncludes = (exceptionIncludes != null) ? List.copyOf(exceptionIncludes) : List.of();
			exceptionExcludes = (exceptionExcludes != null) ? List.copyOf(exceptionExcludes) : List.of();
		}

		void check(PropertyChecks checks) {
			checkMaxRetries(checks, this.maxRetries);
			checks.notNegative("delay", this.delay);
			checks.finiteAtLeast("multiplier", this.multiplier, 1);
			checks.positive("max-delay", this.maxDelay);
			checks.notBelow("max-delay", this.maxDelay, checks.name("delay"), this.delay);
			checks.notNegative("jitter", this.jitter);
			checks.exceptionTypes("exception-includes", this.exceptionIncludes);
			checks.exceptionTypes("exception-excludes", this.exceptionExcludes);
			checkIncludes(checks, checks);
		}

		static void checkMaxRetries(PropertyChecks checks, int maxRetries) {
			checks.between("max-retries", maxRetries, 0, Integer.MAX_VALUE - 1,
					"a task runs at most max-retries + 1 times");
		}

		/**
		 * Check that every included type can be retried at all: an exclude wins over an
		 * include, and NonRetryableTaskException is never retried.
		 * @param includeChecks the checks of the prefix where the includes are set
		 * @param excludeChecks the checks of the prefix where the excludes are set
		 */
		void checkIncludes(PropertyChecks includeChecks, PropertyChecks excludeChecks) {
			for (Class<? extends Throwable> include : this.exceptionIncludes) {
				if (NonRetryableTaskException.class.isAssignableFrom(include)) {
					includeChecks.invalidEntry("exception-includes", include.getName(),
							NonRetryableTaskException.class.getSimpleName() + " is never retried");
				}
				for (Class<? extends Throwable> exclude : this.exceptionExcludes) {
					if (exclude.isAssignableFrom(include)) {
						includeChecks.invalidEntry("exception-includes", include.getName(),
								excludeChecks.name("exception-excludes") + " contains "
										+ ((exclude != include) ? "its supertype " + exclude.getName() : "it too")
										+ ", and an excluded type is never retried");
					}
				}
			}
		}

		/**
		 * These settings as Spring Boot's retry policy settings.
		 * @return the settings
		 */
		public RetryPolicySettings toRetryPolicySettings() {
			RetryPolicySettings settings = new RetryPolicySettings();
			settings.setMaxRetries((long) this.maxRetries);
			settings.setDelay(this.delay);
			settings.setMultiplier(this.multiplier);
			settings.setMaxDelay(this.maxDelay);
			// A zero delay has nothing to vary, and Spring's back-off divides the jitter
			// by
			// the delay: retry at once.
			settings.setJitter(this.delay.isZero() ? Duration.ZERO : this.jitter);
			settings.setExceptionIncludes(this.exceptionIncludes);
			settings.setExceptionExcludes(this.exceptionExcludes);
			return settings;
		}

		/**
		 * The Spring Framework retry policy these settings describe: its back-off, and
		 * which exceptions it retries ({@code RetryPolicy.Builder#includes} and
		 * {@code #excludes}).
		 * @return the policy
		 */
		public RetryPolicy toRetryPolicy() {
			return toRetryPolicySettings().createRetryPolicy();
		}

	}

	/**
	 * How many queues are reported, and when the index of known queues is too large.
	 * Every queue name ever scheduled to stays in the index until an operator removes it,
	 * so what is reported per queue is bounded.
	 *
	 * @param maxQueues Most queues that the metrics gauges, the health details and the
	 * Actuator endpoint's queue list report. Queues this instance has handlers for come
	 * first and are always reported, even beyond it; declared queues
	 * (delayed-tasks.queues.*) come next, then the others by name; the rest are counted,
	 * not listed.
	 * @param queueIndexWarnThreshold Size of the index of known queues above which a
	 * warning is logged, once each time the index grows past it.
	 * @param maxSchedules Most recurring schedules that the health details read (those
	 * this application declares always, even beyond it; then the others by id) and the
	 * most that one page of the recurringtasks endpoint lists.
	 * @param history Whether instances with handlers record each handled queue's counters
	 * of created, succeeded, retried and dead-lettered tasks in Redis once a minute (a
	 * day of minutes, a month of hours; nothing while a queue is idle), for the
	 * dashboard's charts.
	 * @param instances Whether instances with the worker report themselves in Redis every
	 * 10 seconds (id, host, process, each handler's queue, concurrency, tasks running and
	 * timer ownership; an entry that expires 30 seconds after the last report), for the
	 * dashboard's instances page.
	 */
	public record Monitoring(@DefaultValue("100") int maxQueues, @DefaultValue("1000") int queueIndexWarnThreshold,
			@DefaultValue("100") int maxSchedules, @DefaultValue("true") boolean history,
			@DefaultValue("true") boolean instances) {

		void check(PropertyChecks checks) {
			checks.atLeast("max-queues", this.maxQueues, 1);
			checks.atLeast("queue-index-warn-threshold", this.queueIndexWarnThreshold, 1);
			checks.atLeast("max-schedules", this.maxSchedules, 1);
		}

	}

	/**
	 * How long dead letters are kept.
	 *
	 * @param retention Age after which dead letters are deleted.
	 * @param maxCount Most dead letters kept per queue.
	 * @param keepExpired Whether a task that expired before it started (expiresAt,
	 * expireAfter) is kept as a dead letter with reason "expired". When false it is
	 * deleted; either way it is never run, counted and reported to listeners.
	 */
	public record DeadLetter(@DefaultValue("14d") Duration retention, @DefaultValue("100000") int maxCount,
			@DefaultValue("true") boolean keepExpired) {

		void check(PropertyChecks checks) {
			// The scripts read 0 as "no limit", the opposite of what 0 seems to say.
			checks.atLeast("retention", this.retention, Duration.ofMillis(1), "0 would keep dead letters for ever");
			checks.atLeast("max-count", this.maxCount, 1, "0 would keep any number of dead letters");
		}

	}

	/**
	 * How the Lua scripts are sent to Redis.
	 *
	 * @param mode EVAL: EVALSHA, falling back to EVAL (any Redis; the Redis user needs
	 * EVAL, with which it can run any Lua). FUNCTIONS: FCALL of the delayed-tasks
	 * function library (Redis 7 or newer; the Redis user needs FCALL only).
	 * @param loadLibrary With mode FUNCTIONS: whether the application loads the function
	 * library on every master at startup, and again when a master has lost it (its Redis
	 * user then needs FUNCTION LOAD, with which it can run any Lua), rather than only
	 * checking that an administrator loaded it.
	 */
	public record Scripts(@DefaultValue("eval") ScriptsMode mode, @DefaultValue("false") boolean loadLibrary) {

		void check(PropertyChecks checks) {
			if (this.loadLibrary && this.mode != ScriptsMode.FUNCTIONS) {
				throw new IllegalArgumentException(checks.name("load-library") + " is true, but " + checks.name("mode")
						+ " is " + this.mode.name().toLowerCase(Locale.ROOT)
						+ ": the function library is only used with mode functions");
			}
		}

	}

	/**
	 * How the Lua scripts are sent to Redis.
	 */
	public enum ScriptsMode {

		/** EVALSHA, falling back to EVAL: any Redis. */
		EVAL,

		/** FCALL of the delayed-tasks function library: Redis 7 or newer. */
		FUNCTIONS

	}

}

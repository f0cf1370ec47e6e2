package dev.delayedtasks;

import org.jspecify.annotations.Nullable;

/**
 * A queue's flow control, enforced by Redis for every instance at once: each claim leases
 * no more tasks than these limits allow, and a dispatcher held back by them wakes when
 * room returns. Set at start from {@code delayed-tasks.queues.<queue>.rate-limit},
 * {@code global-concurrency} and {@code key-rate-limit}, changed at run time through
 * {@link QueueControl}.
 *
 * @param rateLimit the most task starts in any span of its window, or {@code null} for
 * none
 * @param globalConcurrency the most tasks of the queue leased at once across all
 * instances (at least 1), or {@code null} for no limit
 * @param keyRateLimit the most starts of tasks with one
 * {@link TaskRequest#rateKey(String) rate key} in any span of its window, for every key
 * apart, or {@code null} for none
 * @author delayed-tasks
 * @since 0.1.0
 */
public record QueueLimits(@Nullable RateLimit rateLimit, @Nullable Integer globalConcurrency,
		@Nullable RateLimit keyRateLimit) {

	/** No limits. */
	public static final QueueLimits NONE = new QueueLimits(null, null, null);

	/**
	 * Create limits.
	 * @param rateLimit the rate limit, or {@code null} for none
	 * @param globalConcurrency the global concurrency, at least 1, or {@code null} for
	 * none
	 * @param keyRateLimit the rate limit of each rate key, or {@code null} for none
	 * @throws IllegalArgumentException if the global concurrency is less than 1
	 */
	public QueueLimits {
		if (globalConcurrency != null && globalConcurrency < 1) {
			throw new IllegalArgumentException(
					"A queue's global concurrency must be at least 1 (or none), not " + globalConcurrency);
		}
	}

	/**
	 * Create limits without a rate limit per key.
	 * @param rateLimit the rate limit, or {@code null} for none
	 * @param globalConcurrency the global concurrency, at least 1, or {@code null} for
	 * none
	 * @throws IllegalArgumentException if the global concurrency is less than 1
	 */
	public QueueLimits(@Nullable RateLimit rateLimit, @Nullable Integer globalConcurrency) {
		this(rateLimit, globalConcurrency, null);
	}

	/**
	 * Whether any limit is set.
	 * @return whether one is
	 */
	public boolean limited() {
		return this.rateLimit != null || this.globalConcurrency != null || this.keyRateLimit != null;
	}

	/**
	 * The limits, as
	 * {@code rate-limit 100/1s, global-concurrency 5, key-rate-limit 10/1s} with the
	 * limits that are set, or {@code none}.
	 * @return the description
	 */
	@Override
	public String toString() {
		if (!limited()) {
			return "none";
		}
		StringBuilder described = new StringBuilder();
		if (this.rateLimit != null) {
			described.append("rate-limit ").append(this.rateLimit);
		}
		if (this.globalConcurrency != null) {
			described.append((described.length() > 0) ? ", " : "")
				.append("global-concurrency ")
				.append(this.globalConcurrency);
		}
		if (this.keyRateLimit != null) {
			described.append((described.length() > 0) ? ", " : "").append("key-rate-limit ").append(this.keyRateLimit);
		}
		return described.toString();
	}

}

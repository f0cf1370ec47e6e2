package dev.delayedtasks;

import org.jspecify.annotations.Nullable;

/**
 * A queue's flow control, enforced by Redis for every instance at once: each claim leases
 * no more tasks than these limits allow, and a dispatcher held back by them wakes when
 * room returns. Set at start from {@code delayed-tasks.queues.<queue>.rate-limit} and
 * {@code global-concurrency}, changed at run time through {@link QueueControl}.
 *
 * @param rateLimit the most task starts in any span of its window, or {@code null} for
 * none
 * @param globalConcurrency the most tasks of the queue leased at once across all
 * instances (at least 1), or {@code null} for no limit
 * @author delayed-tasks
 * @since 0.1.0
 */
public record QueueLimits(@Nullable RateLimit rateLimit, @Nullable Integer globalConcurrency) {

	/** No limits. */
	public static final QueueLimits NONE = new QueueLimits(null, null);

	/**
	 * Create limits.
	 * @param rateLimit the rate limit, or {@code null} for none
	 * @param globalConcurrency the global concurrency, at least 1, or {@code null} for
	 * none
	 * @throws IllegalArgumentException if the global concurrency is less than 1
	 */
	public QueueLimits {
		if (globalConcurrency != null && globalConcurrency < 1) {
			throw new IllegalArgumentException(
					"A queue's global concurrency must be at least 1 (or none), not " + globalConcurrency);
		}
	}

	/**
	 * Whether any limit is set.
	 * @return whether one is
	 */
	public boolean limited() {
		return this.rateLimit != null || this.globalConcurrency != null;
	}

}

package dev.delayedtasks.internal.store;

import java.time.Duration;

import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import org.jspecify.annotations.Nullable;

/**
 * How a queue's {@link QueueLimits} are stored: the field {@code fl} of its partition's
 * {@code meta} hash holds {@code <rateCount> <rateWindowMs> <globalConcurrency>}, 0 for a
 * limit that is off, which the scripts read ({@code includes/flow.lua}); {@code flc}
 * holds the configured limits the last start wrote, so a start writes its configuration
 * only when it changed and a change made at run time outlives restarts.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class FlowLimits {

	/** The meta field of the limits in force. */
	public static final String FIELD = "fl";

	/** The meta field of the configured limits the last start wrote. */
	public static final String CONFIGURED_FIELD = "flc";

	private FlowLimits() {
	}

	/**
	 * The stored form of limits.
	 * @param limits the limits
	 * @return the field's value
	 */
	public static String encode(QueueLimits limits) {
		RateLimit rate = limits.rateLimit();
		Integer cap = limits.globalConcurrency();
		return ((rate != null) ? rate.count() + " " + rate.window().toMillis() : "0 0") + " "
				+ ((cap != null) ? cap : 0);
	}

	/**
	 * The limits a stored field holds.
	 * @param field the field's value, or {@code null} when absent
	 * @return the limits, {@link QueueLimits#NONE} for an absent or unreadable field (the
	 * scripts read it alike)
	 */
	public static QueueLimits decode(@Nullable String field) {
		if (field == null) {
			return QueueLimits.NONE;
		}
		String[] parts = field.split(" ");
		try {
			if (parts.length != 3) {
				return QueueLimits.NONE;
			}
			long count = Long.parseLong(parts[0]);
			long window = Long.parseLong(parts[1]);
			long cap = Long.parseLong(parts[2]);
			RateLimit rate = (count > 0 && window > 0 && count <= Integer.MAX_VALUE)
					? new RateLimit((int) count, Duration.ofMillis(window)) : null;
			return new QueueLimits(rate, (cap > 0 && cap <= Integer.MAX_VALUE) ? (Integer) (int) cap : null);
		}
		catch (NumberFormatException ex) {
			return QueueLimits.NONE;
		}
	}

}

package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import org.jspecify.annotations.Nullable;

/**
 * How a queue's {@link QueueLimits} are stored: the field {@code fl} of its partition's
 * {@code meta} hash holds
 * {@code <rateCount> <rateWindowMs> <globalConcurrency> <keyRateCount> <keyRateWindowMs>}
 * (the last two only with a rate limit per key; an earlier version wrote the first three
 * only), 0 for a limit that is off, which the scripts read ({@code includes/flow.lua});
 * {@code flc} holds the configured limits the last start wrote, so a start writes its
 * configuration only when it changed and a change made at run time outlives restarts.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class FlowLimits {

	/** The meta field of the limits in force. */
	public static final String FIELD = "fl";

	/** The meta field of the configured limits the last start wrote. */
	public static final String CONFIGURED_FIELD = "flc";

	/** What flow.lua reads: three or five whole numbers and nothing else. */
	private static final Pattern STORED = Pattern
		.compile("(\\d{1,16}) (\\d{1,16}) (\\d{1,16})(?: (\\d{1,16}) (\\d{1,16}))?");

	private static final long LUA_INTEGERS = 1L << 53;

	private FlowLimits() {
	}

	/**
	 * The stored form of limits.
	 * @param limits the limits
	 * @return the field's value
	 */
	public static String encode(QueueLimits limits) {
		Integer cap = limits.globalConcurrency();
		String encoded = rate(limits.rateLimit()) + " " + ((cap != null) ? cap : 0);
		return (limits.keyRateLimit() != null) ? encoded + " " + rate(limits.keyRateLimit()) : encoded;
	}

	private static String rate(@Nullable RateLimit rate) {
		return (rate != null) ? rate.count() + " " + rate.window().toMillis() : "0 0";
	}

	/**
	 * The limits a stored field holds.
	 * @param field the field's value, or {@code null} when absent
	 * @return the limits, {@link QueueLimits#NONE} for an absent or unreadable field (the
	 * scripts read it alike)
	 */
	public static QueueLimits decode(@Nullable String field) {
		Matcher matcher = (field != null) ? STORED.matcher(field) : null;
		if (matcher == null || !matcher.matches()) {
			return QueueLimits.NONE;
		}
		try {
			long count = Long.parseLong(matcher.group(1));
			long window = Long.parseLong(matcher.group(2));
			long cap = Long.parseLong(matcher.group(3));
			long keyCount = (matcher.group(4) != null) ? Long.parseLong(matcher.group(4)) : 0;
			long keyWindow = (matcher.group(5) != null) ? Long.parseLong(matcher.group(5)) : 0;
			if (Math.max(Math.max(count, window), Math.max(cap, Math.max(keyCount, keyWindow))) >= LUA_INTEGERS) {
				// flow.lua reads whole numbers below 2^53 only, and drops the field.
				return QueueLimits.NONE;
			}
			if ((count > 0 && window <= 0) || (keyCount > 0 && keyWindow <= 0)) {
				// flow.lua drops the whole field then, not only that rate limit.
				return QueueLimits.NONE;
			}
			return new QueueLimits(rate(count, window),
					(cap > 0) ? (Integer) (int) Math.min(cap, Integer.MAX_VALUE) : null, rate(keyCount, keyWindow));
		}
		catch (NumberFormatException ex) {
			return QueueLimits.NONE;
		}
	}

	private static @Nullable RateLimit rate(long count, long window) {
		return (count > 0) ? new RateLimit((int) Math.min(count, Integer.MAX_VALUE),
				Duration.ofMillis(Math.min(window, RateLimit.LONGEST_WINDOW.toMillis()))) : null;
	}

}

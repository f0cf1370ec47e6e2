package dev.delayedtasks;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * At most {@code count} task starts in any span of {@code window}, across every instance
 * of a queue: a sliding window in Redis time, so a burst of {@code count} may start at
 * once, and no two spans of {@code window} that overlap a boundary let more through.
 * Every lease counts: first runs, retries and redeliveries alike. Written
 * {@code count/window}, for example {@code 100/1s}, {@code 5/500ms} or {@code 600/1m}
 * (units {@code ms}, {@code s}, {@code m}, {@code h}; {@code 100/s} is {@code 100/1s}).
 *
 * @param count the most starts in one window, at least 1
 * @param window the length of the window, at least one millisecond, at most
 * {@link #LONGEST_WINDOW}, and in whole milliseconds
 * @author delayed-tasks
 * @since 0.1.0
 */
public record RateLimit(int count, Duration window) {

	/** The longest window: 366 days. */
	public static final Duration LONGEST_WINDOW = Duration.ofDays(366);

	private static final Pattern TEXT = Pattern.compile("\\s*(\\d{1,10})\\s*/\\s*(\\d{0,12})\\s*(ms|s|m|h)\\s*");

	/**
	 * Create a rate limit.
	 * @param count the most starts in one window, at least 1
	 * @param window the length of the window, at least one millisecond and in whole
	 * milliseconds
	 * @throws IllegalArgumentException if the count or the window is out of range
	 */
	public RateLimit {
		if (count < 1) {
			throw new IllegalArgumentException("A rate limit's count must be at least 1, not " + count);
		}
		if (window == null || window.compareTo(Duration.ofMillis(1)) < 0 || window.compareTo(LONGEST_WINDOW) > 0
				|| window.getNano() % 1_000_000 != 0) {
			throw new IllegalArgumentException("A rate limit's window must be at least 1ms, at most "
					+ LONGEST_WINDOW.toDays() + " days and in whole milliseconds, not " + window);
		}
	}

	/**
	 * Read a rate limit written {@code count/window}, as {@link #toString()} writes it.
	 * @param text the text, for example {@code 100/1s}
	 * @return the rate limit
	 * @throws IllegalArgumentException if the text is not a valid rate limit, naming what
	 * is wrong
	 */
	public static RateLimit parse(String text) {
		Matcher matcher = TEXT.matcher((text != null) ? text.toLowerCase(Locale.ROOT) : "");
		if (!matcher.matches()) {
			throw new IllegalArgumentException("'" + text
					+ "' is not a rate limit: write <count>/<window>, for example 100/1s, 5/500ms or 600/1m (units ms, s, m, h)");
		}
		long count = Long.parseLong(matcher.group(1));
		long amount = matcher.group(2).isEmpty() ? 1 : Long.parseLong(matcher.group(2));
		if (count < 1 || count > Integer.MAX_VALUE) {
			throw new IllegalArgumentException(
					"'" + text + "' is not a rate limit: the count must be between 1 and " + Integer.MAX_VALUE);
		}
		Duration window = switch (matcher.group(3)) {
			case "ms" -> Duration.ofMillis(amount);
			case "s" -> Duration.ofSeconds(amount);
			case "m" -> Duration.ofMinutes(amount);
			default -> Duration.ofHours(amount);
		};
		if (window.isZero() || window.compareTo(LONGEST_WINDOW) > 0) {
			throw new IllegalArgumentException(
					"'" + text + "' is not a rate limit: the window must be longer than 0 and at most "
							+ LONGEST_WINDOW.toDays() + " days");
		}
		return new RateLimit((int) count, window);
	}

	/**
	 * Read a rate limit, as {@link #parse(String)} does; the name lets Spring bind a
	 * property to it.
	 * @param text the text, for example {@code 100/1s}
	 * @return the rate limit
	 * @throws IllegalArgumentException if the text is not a valid rate limit
	 */
	public static RateLimit valueOf(String text) {
		return parse(text);
	}

	/**
	 * The limit as {@code count/window}, with the window in the largest unit that divides
	 * it.
	 * @return the text, for example {@code 100/1s}
	 */
	@Override
	public String toString() {
		long ms = this.window.toMillis();
		if (ms % 3_600_000 == 0) {
			return this.count + "/" + (ms / 3_600_000) + "h";
		}
		if (ms % 60_000 == 0) {
			return this.count + "/" + (ms / 60_000) + "m";
		}
		if (ms % 1000 == 0) {
			return this.count + "/" + (ms / 1000) + "s";
		}
		return this.count + "/" + ms + "ms";
	}

}

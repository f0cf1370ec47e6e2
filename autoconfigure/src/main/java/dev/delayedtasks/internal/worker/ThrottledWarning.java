package dev.delayedtasks.internal.worker;

import java.time.Duration;

import org.apache.commons.logging.Log;

/**
 * A warning for a failure that repeats while it lasts (a dispatcher or a timer retrying
 * against a broken key or an unreachable Redis): logged when it first happens or changes,
 * then at most once per interval with the number of repeats in between, so a failure that
 * lasts hours does not flood the log. Used by one thread.
 */
final class ThrottledWarning {

	private final Log logger;

	private final long intervalNanos;

	private String last = "";

	private long loggedAt;

	private int repeats;

	ThrottledWarning(Log logger, Duration interval) {
		this.logger = logger;
		this.intervalNanos = interval.toNanos();
	}

	void warn(String message) {
		long now = System.nanoTime();
		if (message.equals(this.last) && now - this.loggedAt < this.intervalNanos) {
			this.repeats++;
			return;
		}
		this.logger.warn(
				(this.repeats > 0) ? message + " (" + this.repeats + " more time(s) since the last warning)" : message);
		this.last = message;
		this.loggedAt = now;
		this.repeats = 0;
	}

	/** The failure is over: the next one is news again. */
	void reset() {
		this.last = "";
		this.repeats = 0;
	}

}

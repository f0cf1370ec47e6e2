package dev.delayedtasks.internal.producer;

import java.io.IOException;
import java.util.List;

import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;

/**
 * Tells a failure because Redis could not be reached (no connection, no answer in time, a
 * server still loading its data or between masters) from a failure Redis reported about
 * the call itself (a script error, an ACL refusal, out of memory), which sending the call
 * again would only repeat.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class RedisOutages {

	/**
	 * Replies of a server that cannot serve the call yet: loading its data set, without a
	 * reachable master, a cluster slot moving or down, a replica not yet promoted.
	 */
	private static final List<String> UNAVAILABLE_REPLIES = List.of("LOADING", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN",
			"READONLY");

	/** Lettuce's words for a connection that went away under a command. */
	private static final List<String> CONNECTION_LOST = List.of("Connection closed", "Connection disconnected",
			"Connection is closed", "Reconnecting");

	private RedisOutages() {
	}

	/**
	 * Whether a failure means that Redis was unreachable, so the same call may succeed
	 * once it is back.
	 * @param failure the failure, with its causes
	 * @return whether it is an outage
	 */
	static boolean isOutage(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (cause instanceof RedisConnectionFailureException || cause instanceof QueryTimeoutException
					|| cause instanceof RedisConnectionException || cause instanceof RedisCommandTimeoutException
					|| cause instanceof IOException) {
				return true;
			}
			String message = cause.getMessage();
			if (message != null
					&& (startsWithAny(message, UNAVAILABLE_REPLIES) || startsWithAny(message, CONNECTION_LOST))) {
				return true;
			}
		}
		return false;
	}

	private static boolean startsWithAny(String message, List<String> prefixes) {
		for (String prefix : prefixes) {
			if (message.startsWith(prefix)) {
				return true;
			}
		}
		return false;
	}

}

package dev.delayedtasks.internal.store;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The counters a queue keeps in its {@code stats} hash in Redis, each with the short
 * field name the scripts store and the spelled-out name users see (the Actuator endpoint,
 * the documentation). Stored names stay as they are, so existing data needs no migration;
 * this is the one place that maps them. A test keeps this list equal to the fields the
 * scripts count.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public enum QueueCounter {

	/** Tasks stored (not requests answered with an existing or a duplicate task). */
	CREATED("enq", "created"),

	/** Scheduled tasks that became due and ready. */
	PROMOTED("promoted", "promoted"),

	/** Tasks leased to a worker by a claim. */
	CLAIMED("claimed", "claimed"),

	/** Tasks completed by their handler and deleted. */
	SUCCEEDED("done", "succeeded"),

	/** Failed runs that will run again. */
	RETRIED("retry", "retried"),

	/**
	 * Tasks moved to the dead letters after a failure or too many expired leases (not
	 * corrupt data: see {@link #CORRUPT}).
	 */
	DEAD_LETTERED("dead", "deadLettered"),

	/** Expired leases taken back to ready (a crashed or stalled worker). */
	REAPED("reaped", "reaped"),

	/** Leases given back at once because their claim's reply never reached a worker. */
	RECOVERED("recovered", "recovered"),

	/**
	 * Completions rejected because another worker owned the task by then: duplicate
	 * executions.
	 */
	STALE_COMPLETIONS("stale", "staleCompletions"),

	/**
	 * Tasks cancelled: scheduled or ready ones, and running ones whose cancel took effect
	 * when they ended. Stored under the short field {@code canceled}.
	 */
	CANCELLED("canceled", "cancelled"),

	/** Dead letters sent back to ready by a redrive. */
	REDRIVEN("redriven", "redriven"),

	/** Dead letters deleted by purge or by retention. */
	PURGED("purged", "purged"),

	/** Tasks dead-lettered because their data in Redis could not be read. */
	CORRUPT("corrupt", "corrupt"),

	/** Tasks that had not started by their expiry, ended by a claim without running. */
	EXPIRED("expired", "expired"),

	/**
	 * Ready tasks set aside until their rate key had room (key-rate-limit); each comes
	 * back through the schedule and counts as promoted again.
	 */
	SET_ASIDE_BY_KEY("aside", "setAsideByKey"),

	/**
	 * Index entries (scheduled or leased) whose task was gone or in another state,
	 * dropped when found.
	 */
	ORPHANED_INDEX_ENTRIES("orphan", "orphanedIndexEntries"),

	/**
	 * Entries left in the ready list by cancelled and rescheduled tasks, which claims
	 * skip; not a running total: it falls as claims skip them, and the ready count leaves
	 * them out.
	 */
	STALE_READY_ENTRIES("ghost", "staleReadyEntries"),

	/**
	 * The number in the newest lease token ({@code <nonce>:<number>}): one higher for
	 * every lease of the queue, so a late completion of an older lease is recognised.
	 */
	LAST_FENCING_NUMBER("fence", "lastFencingNumber");

	private final String field;

	private final String displayName;

	QueueCounter(String field, String displayName) {
		this.field = field;
		this.displayName = displayName;
	}

	/**
	 * The field of the {@code stats} hash that holds the counter.
	 * @return the stored name, such as {@code enq}
	 */
	public String field() {
		return this.field;
	}

	/**
	 * The name users see.
	 * @return the spelled-out name, such as {@code created}
	 */
	public String displayName() {
		return this.displayName;
	}

	/**
	 * Every counter of a snapshot by its spelled-out name, in the order of this enum, 0
	 * when never counted. Fields this version does not know are left out.
	 * @param stats the snapshot
	 * @return the counters
	 */
	public static Map<String, Long> byDisplayName(QueueStats stats) {
		Map<String, Long> counters = new LinkedHashMap<>();
		for (QueueCounter counter : values()) {
			counters.put(counter.displayName, stats.counter(counter));
		}
		return counters;
	}

}

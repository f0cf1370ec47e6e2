package dev.delayedtasks.internal.store.script;

/**
 * The Lua scripts and the shape of their {@code KEYS}: a fixed part, then a stride per
 * item for the batch scripts. Each file's header repeats these counts on its
 * {@code -- keys:} line, and a test checks that both agree.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public enum Script {

	/** Create tasks (batch; idempotent on id; uniqueness). */
	ENQUEUE("enqueue", 6, 3),

	/** Promote due tasks, reap expired leases, lease up to n ready tasks. */
	CLAIM("claim", 8, 0),

	/** The timer owner's tick: take or keep the timer, promote and reap. */
	PROMOTE("promote", 10, 0),

	/** Complete leased tasks (batch, token-checked). */
	ACK("ack", 2, 4),

	/** Retry a leased task after a back-off, or dead-letter it (token-checked). */
	FAIL("fail", 11, 0),

	/** Heartbeat: extend leases (batch, token-checked). */
	EXTEND("extend", 1, 1),

	/** Give leased tasks back without penalty on shutdown (batch, token-checked). */
	RELEASE("release", 4, 4),

	/**
	 * Give back the tasks leased by claims whose reply never reached the dispatcher.
	 */
	RECOVER("recover", 4, 0),

	/** Cancel a scheduled or ready task, or ask a running one to stop. */
	CANCEL("cancel", 5, 0),

	/** Move a scheduled or ready task to a new due time. */
	RESCHEDULE("reschedule", 6, 0),

	/** Move dead letters back to ready. */
	REDRIVE("redrive", 4, 0),

	/** Delete dead letters: all of them, or those over the age and count limits. */
	PURGE("purge", 2, 0),

	/** Read a partition's counts and counters. */
	STATS("stats", 7, 0),

	/** Record a partition's counters once per minute and hour, for charts. */
	HISTORY("history", 3, 0),

	/** Delete an empty partition's leftover keys, before its queue leaves the index. */
	REMOVE("remove", 10, 0),

	/** Create or update a recurring schedule's definition. */
	RECUR_UPSERT("recur_upsert", 3, 0),

	/**
	 * Create a recurring schedule's next occurrences with the advance of its next tick;
	 * decide whether an occurrence about to run runs.
	 */
	RECUR_ADVANCE("recur_advance", 7, 0),

	/** Pause, resume or remove a recurring schedule; record an occurrence's outcome. */
	RECUR_CONTROL("recur_control", 2, 0),

	/** Create one occurrence of a recurring schedule now, outside its ticks. */
	RECUR_TRIGGER("recur_trigger", 5, 0),

	/** Ask to be told when a live task ends, or find its outcome record. */
	TRACK("track", 3, 0);

	private final String fileName;

	private final int fixedKeys;

	private final int keysPerItem;

	Script(String name, int fixedKeys, int keysPerItem) {
		this.fileName = name + ".lua";
		this.fixedKeys = fixedKeys;
		this.keysPerItem = keysPerItem;
	}

	/**
	 * The resource name, relative to this package.
	 * @return the file name
	 */
	public String fileName() {
		return this.fileName;
	}

	/**
	 * Keys every call passes first.
	 * @return the count
	 */
	public int fixedKeys() {
		return this.fixedKeys;
	}

	/**
	 * Keys each item of a batch adds.
	 * @return the count, 0 for scripts without items
	 */
	public int keysPerItem() {
		return this.keysPerItem;
	}

	boolean acceptsKeyCount(int count) {
		int perItem = count - this.fixedKeys;
		return perItem >= 0 && ((this.keysPerItem == 0) ? perItem == 0 : perItem % this.keysPerItem == 0);
	}

}

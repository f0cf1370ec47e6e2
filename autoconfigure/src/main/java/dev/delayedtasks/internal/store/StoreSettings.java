package dev.delayedtasks.internal.store;

import java.time.Duration;

import dev.delayedtasks.Names;

/**
 * The limits and durations the scripts run with.
 *
 * @param keyPrefix the prefix of every key
 * @param leaseDuration how long a claim or heartbeat leases a task
 * @param reapGrace how long past its lease deadline a task is reaped
 * @param maxDeliveries expired leases in a row (no failure recorded between them) after
 * which a task is dead-lettered
 * @param promoteLimit most due tasks one script moves to ready
 * @param reapLimit most expired leases one script reaps
 * @param fanoutBatch ready tasks per wake token, so several idle dispatchers wake at once
 * @param claimByteBudget payload bytes after which a claim stops adding tasks to its
 * reply
 * @param deadLetterMaxAge age after which dead letters are deleted
 * @param deadLetterMaxCount dead letters kept per queue
 * @param trimLimit most dead letters one script deletes
 * @param tombstoneTtl how long a cancelled ready task's marker lives
 * @param expiredToDeadLetters whether a task that expired before it started is kept as a
 * dead letter (else it is deleted)
 * @param timerTtl the timer lease of a queue partition: its owner re-arms at least every
 * third of it, so a claim tells it of a new earliest lease only when that lease would end
 * (with its grace) sooner
 * @author delayed-tasks
 * @since 0.1.0
 */
public record StoreSettings(String keyPrefix, Duration leaseDuration, Duration reapGrace, int maxDeliveries,
		int promoteLimit, int reapLimit, int fanoutBatch, long claimByteBudget, Duration deadLetterMaxAge,
		int deadLetterMaxCount, int trimLimit, Duration tombstoneTtl, boolean expiredToDeadLetters, Duration timerTtl) {

	/**
	 * Create settings, checking the key prefix against
	 * {@link Names#checkKeyPrefix(String)}: it starts every key, so it is validated like
	 * a queue name before any key is made from it.
	 * @param keyPrefix the prefix of every key
	 * @param leaseDuration how long a claim or heartbeat leases a task
	 * @param reapGrace how long past its lease deadline a task is reaped
	 * @param maxDeliveries expired leases in a row (no failure recorded between them)
	 * after which a task is dead-lettered
	 * @param promoteLimit most due tasks one script moves to ready
	 * @param reapLimit most expired leases one script reaps
	 * @param fanoutBatch ready tasks per wake token, so several idle dispatchers wake at
	 * once
	 * @param claimByteBudget payload bytes after which a claim stops adding tasks to its
	 * reply
	 * @param deadLetterMaxAge age after which dead letters are deleted
	 * @param deadLetterMaxCount dead letters kept per queue
	 * @param trimLimit most dead letters one script deletes
	 * @param tombstoneTtl how long a cancelled ready task's marker lives
	 * @param expiredToDeadLetters whether a task that expired before it started is kept
	 * as a dead letter (else it is deleted)
	 * @param timerTtl the timer lease of a queue partition
	 */
	public StoreSettings {
		Names.checkKeyPrefix(keyPrefix);
	}

	/**
	 * Create settings with the default timer lease.
	 * @param keyPrefix the prefix of every key
	 * @param leaseDuration how long a claim or heartbeat leases a task
	 * @param reapGrace how long past its lease deadline a task is reaped
	 * @param maxDeliveries expired leases in a row after which a task is dead-lettered
	 * @param promoteLimit most due tasks one script moves to ready
	 * @param reapLimit most expired leases one script reaps
	 * @param fanoutBatch ready tasks per wake token
	 * @param claimByteBudget payload bytes after which a claim stops adding tasks
	 * @param deadLetterMaxAge age after which dead letters are deleted
	 * @param deadLetterMaxCount dead letters kept per queue
	 * @param trimLimit most dead letters one script deletes
	 * @param tombstoneTtl how long a cancelled ready task's marker lives
	 * @param expiredToDeadLetters whether a task that expired before it started is kept
	 * as a dead letter (else it is deleted)
	 */
	public StoreSettings(String keyPrefix, Duration leaseDuration, Duration reapGrace, int maxDeliveries,
			int promoteLimit, int reapLimit, int fanoutBatch, long claimByteBudget, Duration deadLetterMaxAge,
			int deadLetterMaxCount, int trimLimit, Duration tombstoneTtl, boolean expiredToDeadLetters) {
		this(keyPrefix, leaseDuration, reapGrace, maxDeliveries, promoteLimit, reapLimit, fanoutBatch, claimByteBudget,
				deadLetterMaxAge, deadLetterMaxCount, trimLimit, tombstoneTtl, expiredToDeadLetters, TIMER_TTL);
	}

	/**
	 * Create settings that keep expired tasks as dead letters.
	 * @param keyPrefix the prefix of every key
	 * @param leaseDuration how long a claim or heartbeat leases a task
	 * @param reapGrace how long past its lease deadline a task is reaped
	 * @param maxDeliveries expired leases in a row after which a task is dead-lettered
	 * @param promoteLimit most due tasks one script moves to ready
	 * @param reapLimit most expired leases one script reaps
	 * @param fanoutBatch ready tasks per wake token
	 * @param claimByteBudget payload bytes after which a claim stops adding tasks
	 * @param deadLetterMaxAge age after which dead letters are deleted
	 * @param deadLetterMaxCount dead letters kept per queue
	 * @param trimLimit most dead letters one script deletes
	 * @param tombstoneTtl how long a cancelled ready task's marker lives
	 */
	public StoreSettings(String keyPrefix, Duration leaseDuration, Duration reapGrace, int maxDeliveries,
			int promoteLimit, int reapLimit, int fanoutBatch, long claimByteBudget, Duration deadLetterMaxAge,
			int deadLetterMaxCount, int trimLimit, Duration tombstoneTtl) {
		this(keyPrefix, leaseDuration, reapGrace, maxDeliveries, promoteLimit, reapLimit, fanoutBatch, claimByteBudget,
				deadLetterMaxAge, deadLetterMaxCount, trimLimit, tombstoneTtl, true);
	}

	/** Most due tasks one promotion moves to ready. */
	public static final int PROMOTE_LIMIT = 500;

	/** Most expired leases one script reaps. */
	public static final int REAP_LIMIT = 100;

	/** Ready tasks per wake token. */
	public static final int FANOUT_BATCH = 16;

	/** Payload bytes after which a claim stops adding tasks to its reply. */
	public static final long CLAIM_BYTE_BUDGET = 1024 * 1024;

	/** Most dead letters one script deletes. */
	public static final int TRIM_LIMIT = 100;

	/** How long a cancelled ready task's marker lives. */
	public static final Duration TOMBSTONE_TTL = Duration.ofDays(1);

	/** The timer lease of {@code delayed-tasks.worker.timer-ttl}'s default. */
	public static final Duration TIMER_TTL = Duration.ofSeconds(3);

	/**
	 * Settings with the given configured values and the scripts' fixed batch limits.
	 * @param keyPrefix the key prefix
	 * @param leaseDuration the lease
	 * @param reapGrace the grace after a lease deadline
	 * @param maxDeliveries expired leases in a row after which a task is dead-lettered
	 * @param deadLetterMaxAge age after which dead letters are deleted
	 * @param deadLetterMaxCount dead letters kept per queue
	 * @return the settings
	 */
	public static StoreSettings of(String keyPrefix, Duration leaseDuration, Duration reapGrace, int maxDeliveries,
			Duration deadLetterMaxAge, int deadLetterMaxCount) {
		return of(keyPrefix, leaseDuration, reapGrace, maxDeliveries, deadLetterMaxAge, deadLetterMaxCount, true);
	}

	/**
	 * Settings with the given configured values and the scripts' fixed batch limits.
	 * @param keyPrefix the key prefix
	 * @param leaseDuration the lease
	 * @param reapGrace the grace after a lease deadline
	 * @param maxDeliveries expired leases in a row after which a task is dead-lettered
	 * @param deadLetterMaxAge age after which dead letters are deleted
	 * @param deadLetterMaxCount dead letters kept per queue
	 * @param expiredToDeadLetters whether a task that expired before it started is kept
	 * as a dead letter (else it is deleted)
	 * @return the settings
	 */
	public static StoreSettings of(String keyPrefix, Duration leaseDuration, Duration reapGrace, int maxDeliveries,
			Duration deadLetterMaxAge, int deadLetterMaxCount, boolean expiredToDeadLetters) {
		return of(keyPrefix, leaseDuration, reapGrace, maxDeliveries, deadLetterMaxAge, deadLetterMaxCount,
				expiredToDeadLetters, TIMER_TTL);
	}

	/**
	 * Settings with the given configured values and the scripts' fixed batch limits.
	 * @param keyPrefix the key prefix
	 * @param leaseDuration the lease
	 * @param reapGrace the grace after a lease deadline
	 * @param maxDeliveries expired leases in a row after which a task is dead-lettered
	 * @param deadLetterMaxAge age after which dead letters are deleted
	 * @param deadLetterMaxCount dead letters kept per queue
	 * @param expiredToDeadLetters whether a task that expired before it started is kept
	 * as a dead letter (else it is deleted)
	 * @param timerTtl the timer lease of a queue partition
	 * @return the settings
	 */
	public static StoreSettings of(String keyPrefix, Duration leaseDuration, Duration reapGrace, int maxDeliveries,
			Duration deadLetterMaxAge, int deadLetterMaxCount, boolean expiredToDeadLetters, Duration timerTtl) {
		return new StoreSettings(keyPrefix, leaseDuration, reapGrace, maxDeliveries, PROMOTE_LIMIT, REAP_LIMIT,
				FANOUT_BATCH, CLAIM_BYTE_BUDGET, deadLetterMaxAge, deadLetterMaxCount, TRIM_LIMIT, TOMBSTONE_TTL,
				expiredToDeadLetters, timerTtl);
	}

	/**
	 * The longest a timer owner waits between two promotions with nothing due.
	 * @return the interval
	 * @see TimerTick#rearmInterval(Duration)
	 */
	public Duration timerRearmInterval() {
		return TimerTick.rearmInterval(this.timerTtl);
	}

	/**
	 * What an {@code enqueue} call leases for a dispatcher of this process: the claim's
	 * lease, and a tick for the timer owner on the same condition as a claim's (the first
	 * lease would be reaped before the owner's next promotion).
	 * @param nonce the dispatcher's lease nonce for this call
	 * @param max the most tasks to lease
	 * @return the hand-off argument
	 */
	public TaskHandoff.HandoffLease handoffLease(String nonce, int max) {
		long leaseMs = this.leaseDuration.toMillis();
		return new TaskHandoff.HandoffLease(nonce, max, leaseMs,
				leaseMs + this.reapGrace.toMillis() < timerRearmInterval().toMillis());
	}

	/**
	 * The keys of a queue's partition.
	 * @param queue the queue, already validated
	 * @return the keys
	 */
	public PartitionKeys keys(String queue) {
		return PartitionKeys.of(this.keyPrefix, queue);
	}

}

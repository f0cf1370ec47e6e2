package dev.delayedtasks.internal.worker;

import java.time.Duration;

/**
 * How workers and timers run.
 *
 * @param leaseDuration how long a claim leases a task; heartbeats extend it every third
 * of it
 * @param reapGrace how long past its deadline an expired lease is reaped
 * @param timerTtl how long the timer lease lasts without a tick; a dead owner is replaced
 * within it
 * @param blockTimeout the longest {@code BLPOP} of idle dispatchers
 * @param shutdownTimeout how long stopping waits for running handlers to return
 * @param interruptOnShutdown whether stopping interrupts running handlers at once, or
 * lets them finish until the last quarter (at most 1 s) of the shutdown timeout
 * @param maxClaim most tasks one claim leases
 * @author delayed-tasks
 * @since 0.1.0
 */
public record WorkerSettings(Duration leaseDuration, Duration reapGrace, Duration timerTtl, Duration blockTimeout,
		Duration shutdownTimeout, boolean interruptOnShutdown, int maxClaim) {

	/**
	 * How often leases are extended while handlers run.
	 * @return a third of the lease
	 */
	public Duration heartbeatInterval() {
		return this.leaseDuration.dividedBy(3);
	}

}

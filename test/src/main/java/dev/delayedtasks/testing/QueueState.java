package dev.delayedtasks.testing;

import java.time.Duration;

/**
 * What a queue has to do, by its test clock: tasks due and not yet run, ready and
 * running, whether it is paused, and when the next falls due.
 *
 * @param now the queue's time, epoch milliseconds
 * @param due tasks due and not yet promoted
 * @param ready tasks ready to run
 * @param leased tasks running
 * @param paused whether the queue is paused
 * @param nextDueMs the next due time, or -1
 * @author delayed-tasks
 * @since 0.1.0
 */
record QueueState(long now, long due, long ready, long leased, boolean paused, long nextDueMs) {

	boolean isIdle() {
		return this.due == 0 && this.ready == 0 && this.leased == 0;
	}

	String describe() {
		return this.due + " due, " + this.ready + " ready and " + this.leased + " running tasks"
				+ ((this.nextDueMs >= 0 && this.nextDueMs > this.now)
						? " (the next is due " + Duration.ofMillis(this.nextDueMs - this.now) + " ahead)" : "");
	}

}

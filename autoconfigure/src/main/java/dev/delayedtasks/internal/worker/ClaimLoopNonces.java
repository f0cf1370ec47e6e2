package dev.delayedtasks.internal.worker;

import java.util.concurrent.atomic.AtomicLong;

import dev.delayedtasks.internal.store.LeaseHolders;

/**
 * The nonces of an instance's claim loops, one new nonce per loop of any of its queues:
 * numbered per instance, not per dispatcher, because a stop and start of the handler
 * registry makes new dispatchers while a loop the stop gave up on (stuck in a call to an
 * unresponsive Redis) may still recover its lost claims by nonce later.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
final class ClaimLoopNonces {

	private final String instanceId;

	private final AtomicLong loops = new AtomicLong();

	/**
	 * Create the nonces of an instance.
	 * @param instanceId the instance's id
	 */
	ClaimLoopNonces(String instanceId) {
		this.instanceId = instanceId;
	}

	/**
	 * The nonce of a new loop.
	 * @return the nonce, never given before by this instance
	 */
	String next() {
		return LeaseHolders.loopNonce(this.instanceId, this.loops.incrementAndGet());
	}

}

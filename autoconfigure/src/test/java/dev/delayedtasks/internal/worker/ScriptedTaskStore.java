package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimitedException;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.Lease;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.internal.store.TaskHandoff;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.TimerTick;
import org.jspecify.annotations.Nullable;

/**
 * A {@link TaskStore} for unit tests of the worker's own logic: each operation answers
 * what the test scripts, and operations the test does not expect fail.
 */
class ScriptedTaskStore implements TaskStore {

	Function<List<Lease>, List<AckOutcome>> ack = (leases) -> {
		throw new UnsupportedOperationException("ack");
	};

	Function<List<Lease>, List<ExtendOutcome>> extend = (leases) -> {
		throw new UnsupportedOperationException("extend");
	};

	Function<Boolean, TimerTick> promote = (tickConsumed) -> {
		throw new UnsupportedOperationException("promote");
	};

	final List<Lease> acknowledged = new ArrayList<>();

	final List<Lease> released = new CopyOnWriteArrayList<>();

	@Override
	public ClaimBatch claim(String queue, int max, String nonce) {
		throw new UnsupportedOperationException("claim");
	}

	@Override
	public boolean configureLimits(String queue, QueueLimits configured) {
		throw new UnsupportedOperationException("configureLimits");
	}

	@Override
	public TimerTick promote(String queue, String ownerId, Duration timerTtl, boolean tickConsumed,
			TaskHandoff.@Nullable HandoffLease handoff) {
		return this.promote.apply(tickConsumed);
	}

	@Override
	public void resignTimer(String queue, String ownerId) {
	}

	@Override
	public List<AckOutcome> ack(String queue, List<Lease> leases, List<String> results) {
		List<AckOutcome> outcomes = this.ack.apply(leases);
		synchronized (this.acknowledged) {
			this.acknowledged.addAll(leases);
		}
		return outcomes;
	}

	@Override
	public FailOutcome fail(String queue, Lease lease, TaskFailure failure) {
		throw new UnsupportedOperationException("fail");
	}

	@Override
	public List<ExtendOutcome> extend(String queue, List<Lease> leases) {
		return this.extend.apply(leases);
	}

	@Override
	public List<ReleaseOutcome> release(String queue, List<Lease> leases, Duration hold,
			RateLimitedException.Scope scope) {
		this.released.addAll(leases);
		return Collections.nCopies(leases.size(), ReleaseOutcome.RELEASED);
	}

	@Override
	public int recover(String queue, List<String> claimNonces) {
		throw new UnsupportedOperationException("recover");
	}

}

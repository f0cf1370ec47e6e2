package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.RateLimitedException;
import dev.delayedtasks.RateLimitedException.Scope;
import dev.delayedtasks.internal.store.Lease;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.TaskStore.AckOutcome;
import dev.delayedtasks.internal.store.TaskStore.FailOutcome;
import dev.delayedtasks.internal.store.TaskStore.ReleaseOutcome;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The completion path of a queue: records the outcome of finished runs in Redis on its
 * own thread, acknowledging successes in batches: on a busy queue, while more runs are
 * held or about to be handed over, an outcome waits up to a millisecond for others to
 * share its call, so a busy queue pays a fraction of a call per outcome. Handler threads
 * never talk to Redis about their own outcome, so an interrupted handler thread cannot
 * lose it. A completion that cannot reach Redis is retried while the run's lease lasts;
 * after that the task runs again elsewhere (at least once).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class Completions {

	private static final Log logger = LogFactory.getLog(Completions.class);

	/**
	 * Failed runs, each logged once with its stack trace: retries at INFO, dead letters
	 * at WARN. A category of its own, so applications tune it apart from the rest.
	 */
	private static final Log failureLogger = LogFactory.getLog("dev.delayedtasks.failures");

	private static final int MAX_BATCH = 128;

	/**
	 * The longest an outcome waits for others to share its call while more runs of the
	 * queue are held here: a millisecond of a busy queue's outcomes goes in one call
	 * instead of one call each.
	 */
	private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	/** A batch this large is recorded at once. */
	private static final int LINGER_BELOW = 4;

	/** A waiting batch is recorded as soon as it is this large. */
	private static final int LINGER_TARGET = 8;

	private final String queue;

	private final TaskStore store;

	private final LeaseHeartbeat heartbeat;

	private final Listeners listeners;

	private final BlockingQueue<Completion> pending = new LinkedBlockingQueue<>();

	/**
	 * Outcomes handed over and not recorded yet, the batch being recorded included: an
	 * empty queue alone does not mean the thread is idle.
	 */
	private final AtomicInteger unrecorded = new AtomicInteger();

	/**
	 * Whether the current start records outcomes; each start has a flag of its own, so a
	 * thread stop gave up on (stuck in a call to an unresponsive Redis) ends when it
	 * returns, instead of living on beside the next start's.
	 */
	private volatile AtomicBoolean running = new AtomicBoolean();

	private @Nullable Thread thread;

	Completions(String queue, TaskStore store, LeaseHeartbeat heartbeat, Listeners listeners) {
		this.queue = queue;
		this.store = store;
		this.heartbeat = heartbeat;
		this.listeners = listeners;
	}

	/**
	 * Start recording outcomes on a thread of the queue's own.
	 * @param threads makes the queue's threads
	 */
	void start(QueueThreads threads) {
		AtomicBoolean started = new AtomicBoolean(true);
		this.running = started;
		this.thread = threads.start("complete", () -> drain(started), true);
	}

	void succeeded(ActiveRun run, Duration runTime, @Nullable String result) {
		enqueue(new Completion(run, null, null, runTime, result, false, null));
	}

	void failed(ActiveRun run, Throwable failure, TaskFailure decision, Duration runTime) {
		enqueue(new Completion(run, failure, decision, runTime, null, false, null));
	}

	/**
	 * A run interrupted because its lease ran out (Redis stalled, or this process did):
	 * not the handler's failure, so its task is given back without spending an attempt,
	 * unless another worker has it already.
	 * @param run the run
	 */
	void leaseLost(ActiveRun run) {
		enqueue(new Completion(run, null, null, Duration.ZERO, null, true, null));
	}

	/**
	 * A run whose handler threw {@link RateLimitedException}: its task is given back
	 * without spending an attempt and its queue is held.
	 * @param run the run
	 * @param rateLimited what its handler threw
	 */
	void rateLimited(ActiveRun run, RateLimitedException rateLimited) {
		enqueue(new Completion(run, null, null, Duration.ZERO, null, false, rateLimited));
	}

	private void enqueue(Completion completion) {
		this.unrecorded.incrementAndGet();
		this.pending.add(completion);
	}

	boolean isIdle() {
		return this.unrecorded.get() == 0;
	}

	/**
	 * Record what is pending until {@code deadline}, then stop the thread and give up the
	 * outcomes still unrecorded: their runs are untracked (so they hold no capacity into
	 * a later start) and their tasks run again after their leases, as after a crash.
	 * @param deadline the {@link System#nanoTime()} after which to stop waiting
	 */
	void stop(long deadline) {
		// Wait for the batch in progress too: interrupting the thread while it talks to
		// Redis would lose an outcome that is already known.
		while (!isIdle() && System.nanoTime() - deadline < 0) {
			sleep(10);
		}
		this.running.set(false);
		Thread worker = this.thread;
		if (worker != null) {
			worker.interrupt();
			try {
				worker.join(Math.max(100, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		List<Completion> unrecorded = new ArrayList<>();
		this.pending.drainTo(unrecorded);
		if (!unrecorded.isEmpty()) {
			this.unrecorded.addAndGet(-unrecorded.size());
			logger.warn("Could not record the outcome of " + unrecorded.size() + " task(s) of queue '" + this.queue
					+ "' before stopping; they run again after their leases expire: "
					+ unrecorded.stream().map((completion) -> completion.run().lease().id().value()).toList());
			unrecorded.forEach((completion) -> this.heartbeat.untrack(completion.run()));
		}
	}

	private void drain(AtomicBoolean running) {
		// Only a queue whose outcomes come less than the linger apart waits for more:
		// where handlers run long, the next outcome is not a millisecond away.
		long lastTaken = System.nanoTime() - LINGER_NANOS;
		while (running.get()) {
			try {
				Completion first = this.pending.poll(200, TimeUnit.MILLISECONDS);
				if (first == null) {
					continue;
				}
				long arrived = System.nanoTime();
				List<Completion> batch = new ArrayList<>();
				batch.add(first);
				this.pending.drainTo(batch, MAX_BATCH - 1);
				boolean busy = arrived - lastTaken < LINGER_NANOS;
				try {
					lastTaken = busy ? linger(batch, running, arrived) : arrived;
					record(batch, running);
				}
				catch (Throwable ex) {
					// Never let the completion thread die, of an Error either (out of
					// memory for a moment, a listener's): these runs' tasks come back
					// after their lease, and the thread goes on with the next outcomes.
					logger.error("Could not record " + batch.size() + " outcome(s) of queue '" + this.queue + "'", ex);
					batch.forEach((completion) -> this.heartbeat.untrack(completion.run()));
				}
				finally {
					this.unrecorded.addAndGet(-batch.size());
				}
			}
			catch (InterruptedException ex) {
				if (!running.get()) {
					return;
				}
			}
		}
	}

	/**
	 * Wait, a millisecond at most, for more outcomes to join a small batch of a busy
	 * queue (outcomes came less than a millisecond apart), until it holds
	 * {@link #LINGER_TARGET} and as long as runs that are not in it are held here or
	 * about to be handed over by a {@code schedule} call in flight (each may end within
	 * the wait). An outcome with no other run about (a caller awaiting each task's
	 * outcome before the next) never waits, nor does a batch that is large already: at
	 * high rates the batches are large without waiting, and a wait would only keep holds.
	 * @param batch the batch, added to
	 * @param running the flag of this start
	 * @param arrived when the batch's first outcome was taken
	 * @return when the batch's last outcome was taken
	 */
	private long linger(List<Completion> batch, AtomicBoolean running, long arrived) {
		long taken = arrived;
		if (batch.size() >= LINGER_BELOW) {
			return taken;
		}
		long deadline = arrived + LINGER_NANOS;
		while (batch.size() < LINGER_TARGET && running.get() && this.heartbeat.heldOrExpected() > batch.size()) {
			long left = deadline - System.nanoTime();
			if (left <= 0) {
				break;
			}
			try {
				Completion next = this.pending.poll(left, TimeUnit.NANOSECONDS);
				if (next != null) {
					taken = System.nanoTime();
					batch.add(next);
					this.pending.drainTo(batch, MAX_BATCH - batch.size());
				}
			}
			catch (InterruptedException ex) {
				// Stop gave up waiting: the batch is recorded or given up as before.
				Thread.currentThread().interrupt();
				break;
			}
		}
		return taken;
	}

	private void record(List<Completion> batch, AtomicBoolean running) {
		List<Completion> lost = batch.stream().filter(Completion::leaseLost).toList();
		List<Completion> held = batch.stream().filter((c) -> c.rateLimited() != null).toList();
		List<Completion> successes = batch.stream()
			.filter((c) -> !c.leaseLost() && c.rateLimited() == null && c.failure() == null)
			.toList();
		List<Completion> failures = batch.stream().filter((c) -> c.failure() != null).toList();
		if (!lost.isEmpty()) {
			try {
				List<ReleaseOutcome> outcomes = this.store.release(this.queue,
						lost.stream().map((c) -> c.run().lease()).toList());
				for (int i = 0; i < lost.size(); i++) {
					givenBack(lost.get(i).run(), outcomes.get(i));
				}
			}
			catch (RuntimeException ex) {
				// Its lease has run out: the task comes back when Redis reaps it.
				logger.warn("Could not give back " + lost.size() + " task(s) of queue '" + this.queue
						+ "' whose lease ran out; they run again after it expires: " + ex.getMessage());
				lost.forEach((completion) -> this.heartbeat.untrack(completion.run()));
			}
		}
		List<Completion> queueHolds = held.stream().filter((c) -> scope(c) == Scope.QUEUE).toList();
		if (!queueHolds.isEmpty()) {
			// One hold for the batch: the longest any of its handlers asked for.
			Duration hold = queueHolds.stream()
				.map((c) -> hold(c).retryAfter())
				.max(Comparator.naturalOrder())
				.orElseThrow();
			holdBack(queueHolds, hold, Scope.QUEUE, running);
		}
		for (Completion keyHold : held) {
			if (scope(keyHold) == Scope.KEY) {
				// Each for its own key, as long as its handler asked.
				holdBack(List.of(keyHold), hold(keyHold).retryAfter(), Scope.KEY, running);
			}
		}
		try {
			if (!successes.isEmpty()) {
				List<AckOutcome> outcomes = this.store.ack(this.queue,
						successes.stream().map((c) -> c.run().lease()).toList(),
						successes.stream().map(Completion::result).toList());
				for (int i = 0; i < successes.size(); i++) {
					acknowledged(successes.get(i), outcomes.get(i));
				}
			}
		}
		catch (RuntimeException ex) {
			retryLater(successes, ex, running);
		}
		for (Completion failure : failures) {
			try {
				failed(failure, this.store.fail(this.queue, failure.run().lease(), failure.decision()));
			}
			catch (RuntimeException ex) {
				retryLater(List.of(failure), ex, running);
			}
		}
	}

	private void givenBack(ActiveRun run, ReleaseOutcome outcome) {
		this.heartbeat.untrack(run);
		switch (outcome) {
			case RELEASED -> logger.warn("Task " + run.lease().id() + " of queue '" + this.queue + "' was interrupted"
					+ " because its lease ran out; given back to run again, without spending an attempt");
			case CANCELLED -> logger.info("Task " + run.lease().id() + " of queue '" + this.queue
					+ "' was cancelled while its lease ran out");
			case LOST -> {
				logger.warn("Task " + run.lease().id() + " of queue '" + this.queue + "' was interrupted because its"
						+ " lease ran out, and another worker had taken it over: it ran twice");
				this.listeners.staleAcknowledgement(run.context());
			}
			case GONE -> logger.debug("Task " + run.lease().id() + " of queue '" + this.queue
					+ "' whose lease ran out was given back already, or is gone");
		}
	}

	private void holdBack(List<Completion> held, Duration hold, Scope scope, AtomicBoolean running) {
		try {
			List<ReleaseOutcome> outcomes = this.store.release(this.queue,
					held.stream().map((c) -> c.run().lease()).toList(), hold, scope);
			for (int i = 0; i < held.size(); i++) {
				heldBack(held.get(i), outcomes.get(i));
			}
		}
		catch (RuntimeException ex) {
			retryLater(held, ex, running);
		}
	}

	private static RateLimitedException hold(Completion completion) {
		return Objects.requireNonNull(completion.rateLimited());
	}

	private static Scope scope(Completion completion) {
		return hold(completion).scope();
	}

	private void heldBack(Completion completion, ReleaseOutcome outcome) {
		ActiveRun run = completion.run();
		Duration hold = hold(completion).retryAfter();
		this.heartbeat.untrack(run);
		switch (outcome) {
			case RELEASED -> {
				logger.info("Task " + run.lease().id() + " of queue '" + this.queue + "' was rate limited by its"
						+ " handler: given back without spending an attempt, "
						+ ((scope(completion) == Scope.KEY) ? "its rate key" : "the queue") + " is held for "
						+ hold.toMillis() + " ms");
				this.listeners.rateLimited(run.context(), hold);
			}
			case CANCELLED ->
				logger.info("Task " + run.lease().id() + " of queue '" + this.queue + "' was cancelled while it ran");
			case LOST -> {
				logger.warn("Task " + run.lease().id() + " of queue '" + this.queue + "' was rate limited by its"
						+ " handler, but another worker had taken it over: it ran twice");
				this.listeners.staleAcknowledgement(run.context());
			}
			// Sent again after a lost reply: the first call gave it back and held the
			// queue.
			case GONE -> this.listeners.rateLimited(run.context(), hold);
		}
	}

	private void acknowledged(Completion completion, AckOutcome outcome) {
		ActiveRun run = completion.run();
		this.heartbeat.untrack(run);
		switch (outcome) {
			case DONE -> this.listeners.succeeded(run.context(), completion.runTime());
			case STALE -> {
				logger.warn("Task " + run.lease().id() + " of queue '" + this.queue
						+ "' completed, but another worker had taken it over: it ran twice");
				this.listeners.staleAcknowledgement(run.context());
			}
			case GONE -> logger.debug("Task " + run.lease().id() + " was already completed");
			case CORRUPT -> logger.warn("Task " + run.lease().id() + " of queue '" + this.queue
					+ "' had corrupt data in Redis and was dead-lettered");
		}
	}

	private void failed(Completion completion, FailOutcome outcome) {
		ActiveRun run = completion.run();
		Lease lease = run.lease();
		Throwable failure = completion.failure();
		this.heartbeat.untrack(run);
		switch (outcome.kind()) {
			case RETRY_SCHEDULED, RETRY_READY -> {
				Instant due = Instant.ofEpochMilli(outcome.dueMs());
				if (failureLogger.isInfoEnabled()) {
					failureLogger.info("Task " + lease.id() + " of queue '" + this.queue + "' failed (attempt "
							+ run.context().attempt() + "); retry due at " + due + " (in "
							+ Math.max(0, outcome.dueMs() - outcome.now()) + " ms)", failure);
				}
				this.listeners.retried(run.context(), failure, due);
			}
			case DEAD -> {
				// A failure routed to a retry is dead only when the store found its
				// attempts used up.
				String reason = ((completion.decision().retryDelay() != null) ? FailureReason.RETRIES_EXHAUSTED
						: completion.decision().deadReason())
					.value();
				failureLogger
					.warn("Task " + lease.id() + " of queue '" + this.queue + "' failed for good after attempt "
							+ run.context().attempt() + " (" + reason + "), moved to the dead letters", failure);
				this.listeners.deadLettered(run.context(), failure, reason);
			}
			case CANCELLED -> logger.info("Task " + lease.id() + " of queue '" + this.queue + "' was cancelled");
			case STALE -> {
				logger.warn("Task " + lease.id() + " of queue '" + this.queue
						+ "' failed, but another worker had taken it over: it ran twice");
				this.listeners.staleAcknowledgement(run.context());
			}
			case GONE -> logger.debug("The failure of task " + lease.id() + " of queue '" + this.queue
					+ "' was already recorded, or the task is gone");
			case CORRUPT -> logger.warn("Task " + lease.id() + " of queue '" + this.queue
					+ "' had corrupt data in Redis when its failure was recorded, and was dead-lettered: " + failure);
		}
	}

	private void retryLater(List<Completion> completions, RuntimeException ex, AtomicBoolean running) {
		long now = System.nanoTime();
		for (Completion completion : completions) {
			if (completion.run().leaseExpiredAt(now) || !running.get()) {
				logger.warn("Could not record the outcome of task " + completion.run().lease().id() + " of queue '"
						+ this.queue + "' before its lease ran out; it will run again: " + ex.getMessage());
				this.heartbeat.untrack(completion.run());
			}
			else {
				enqueue(completion);
			}
		}
		sleep(100);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * One run's outcome to record.
	 *
	 * @param run the run
	 * @param failure what its handler threw, when it failed
	 * @param decision what the failure leads to, when it failed
	 * @param runTime how long it ran
	 * @param result its result to keep, when it succeeded
	 * @param leaseLost whether it was stopped because its lease ran out
	 * @param hold how long to hold the queue, when its handler was rate limited
	 */
	private record Completion(ActiveRun run, @Nullable Throwable failure, @Nullable TaskFailure decision,
			Duration runTime, @Nullable String result, boolean leaseLost, @Nullable RateLimitedException rateLimited) {

	}

}

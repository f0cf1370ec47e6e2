package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.ExpiredTask;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.codec.PayloadCodec.Envelope;
import dev.delayedtasks.internal.worker.BlockingConnections.BlockingConnection;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The claim loop of one queue on this instance, on a thread of the queue's own: claims
 * tasks while permits are free, hands each to the handler executor, blocks on the queue's
 * wake list when there is nothing to claim, gives back the tasks of claims whose reply
 * was lost, and backs off while Redis fails. It never dies of an error.
 * <p>
 * Two budgets bound it: a permit per running handler ({@code concurrency}), freed when
 * the handler returns, and a hold per task this instance holds, from its claim until its
 * outcome is recorded in Redis or it is released ({@code concurrency + max-claim}). So
 * outcomes are written while the next tasks run, yet however fast handlers fail, an
 * instance never holds more than its concurrency plus one claim.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class Dispatcher {

	private static final Log logger = LogFactory.getLog(Dispatcher.class);

	/** Lost claims remembered for {@code recover}; older ones wait for lease expiry. */
	private static final int MAX_LOST_CLAIMS = 64;

	private final String queue;

	private final TaskStore store;

	private final BlockingConnections connections;

	private final WorkerSettings settings;

	private final PartitionKeys keys;

	private final Executor executor;

	private final LeaseHeartbeat heartbeat;

	private final TaskRunner runner;

	private final Listeners listeners;

	private final int concurrency;

	private final AtomicInteger running = new AtomicInteger();

	/**
	 * The claim loop now running, or {@code null} when stopped. Each start makes a new
	 * one with budgets of its own, so a loop that {@link #stop()} gave up on (stuck in a
	 * call to an unresponsive Redis) and the runs it leaked can never take capacity from
	 * the loop a later start runs.
	 */
	private volatile @Nullable Loop loop;

	Dispatcher(String queue, int concurrency, WorkerServices services, LeaseHeartbeat heartbeat, TaskRunner runner) {
		this.queue = queue;
		this.store = services.store();
		this.connections = services.connections();
		this.settings = services.settings();
		this.keys = services.storeSettings().keys(queue);
		this.executor = services.handlerExecutor();
		this.heartbeat = heartbeat;
		this.runner = runner;
		this.listeners = services.listeners();
		this.concurrency = concurrency;
	}

	/**
	 * Start claiming on a new dispatcher thread. Not a daemon: like a message listener
	 * container, a running handler keeps a worker-only application (no web server) alive
	 * until the context is closed.
	 * @param threads makes the queue's threads
	 */
	void start(QueueThreads threads) {
		Loop started = new Loop(UUID.randomUUID().toString().substring(0, 8), new Semaphore(this.concurrency),
				new Semaphore(this.concurrency + this.settings.maxClaim()));
		this.loop = started;
		started.thread = threads.start("dispatcher", () -> dispatch(started), false);
	}

	/**
	 * Stop claiming, without waiting: only an idle wait is cut short (it sees the stop
	 * next, before any claim); an interrupt inside a claim would lose the claimed tasks'
	 * reply. A loop still in a claim releases what that claim leased as soon as the reply
	 * comes, and never runs it.
	 * @return the loop's thread, to {@link #awaitStopped await}, or {@code null}
	 */
	@Nullable Thread stopClaiming() {
		Loop stopped = this.loop;
		this.loop = null;
		if (stopped == null || stopped.thread == null) {
			return null;
		}
		stopped.live = false;
		if (stopped.idle) {
			stopped.thread.interrupt();
		}
		return stopped.thread;
	}

	/**
	 * Wait, until {@code deadline} at most, for a stopped loop to end.
	 * @param thread the loop's thread, from {@link #stopClaiming()}
	 * @param deadline the {@link System#nanoTime()} after which to stop waiting
	 */
	void awaitStopped(@Nullable Thread thread, long deadline) {
		if (thread == null) {
			return;
		}
		long waitMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
		try {
			thread.join(Math.min(waitMillis, this.settings.blockTimeout().plusSeconds(2).toMillis()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Tell the listeners of the tasks the claim ended because they expired: they hear it
	 * from this instance only, as the claim that found them ran here.
	 * @param expired the tasks
	 */
	private void reportExpired(List<ExpiredTask> expired) {
		for (ExpiredTask task : expired) {
			if (logger.isDebugEnabled()) {
				logger.debug("Task " + task.id() + " of queue '" + this.queue + "' had not started by its expiry "
						+ task.expiresAt() + " and will not run");
			}
			this.listeners.expired(this.queue, task.id(), task.expiresAt());
		}
	}

	/**
	 * How many handlers run now.
	 * @return the count
	 */
	int activeTasks() {
		return this.running.get();
	}

	private void dispatch(Loop loop) {
		BlockingConnection wake = null;
		long backOff = 0;
		long claims = 0;
		Deque<String> lostClaims = new ArrayDeque<>();
		ThrottledWarning failures = new ThrottledWarning(logger, Duration.ofMinutes(1));
		while (loop.live) {
			String claimNonce = null;
			try {
				int wanted = claimable(loop);
				if (wanted == 0) {
					continue;
				}
				if (!lostClaims.isEmpty()) {
					recover(lostClaims);
				}
				claimNonce = loop.nonce + "." + Long.toString(++claims, 36);
				long sent = System.nanoTime();
				ClaimBatch batch = this.store.claim(this.queue, wanted, claimNonce);
				claimNonce = null;
				reportExpired(batch.expired());
				if (!loop.live) {
					// Stop gave up on this claim: nobody heartbeats or records what it
					// leased, so it goes back at once instead of running here unheld.
					releaseQuietly(batch.tasks());
					break;
				}
				submitAll(loop, batch, sent);
				if (batch.tasks().size() < wanted && !batch.more()) {
					if (wake == null) {
						wake = this.connections.open(this.settings.blockTimeout());
					}
					loop.idle = true;
					try {
						wake.pop(this.settings.blockTimeout(), this.keys.wake());
					}
					finally {
						loop.idle = false;
					}
				}
				// Only a whole round resets: a claim that works followed by a BLPOP that
				// keeps failing (a user without +blpop) must still back off and warn
				// once a minute, not spin and flood the log.
				backOff = 0;
				failures.reset();
			}
			catch (InterruptedException ex) {
				if (!loop.live) {
					break;
				}
				// Only stop means to interrupt this thread, and it ends the loop first:
				// a stray interrupt must not leave the queue unclaimed.
			}
			catch (RuntimeException | Error ex) {
				// An Error too (out of memory for a moment, a listener's): the dispatcher
				// backs off and claims again; a dead dispatcher would leave the queue
				// unclaimed while health says UP.
				if (claimNonce != null) {
					// Redis may still run the claim whose reply was lost and lease tasks
					// nobody holds.
					lostClaims.addLast(claimNonce);
					if (lostClaims.size() > MAX_LOST_CLAIMS) {
						// The oldest one's tasks come back when their leases expire.
						lostClaims.removeFirst();
					}
				}
				if (!loop.live) {
					break;
				}
				backOff = Math.min(1000, Math.max(50, backOff * 2));
				failures
					.warn("Dispatcher of queue '" + this.queue + "' failed, retrying in up to 1 s: " + ex.getMessage());
				if (wake != null) {
					wake.close();
					wake = null;
				}
				sleep(backOff);
			}
		}
		if (wake != null) {
			wake.close();
		}
		if (!lostClaims.isEmpty()) {
			// A claim interrupted or failed at stop: give its tasks back now rather than
			// after lease + grace (the recover runs after the claim on the connection).
			recoverQuietly(lostClaims);
		}
	}

	/**
	 * Hold every task of a claim before any of them runs, so each is released at stop and
	 * none waits untracked while an earlier one runs on a synchronous or caller-runs
	 * executor; then hand them to the executor one by one.
	 * @param loop the loop that claimed them
	 * @param batch the claim's reply
	 * @param sent when the claim was sent: the leases run from then
	 */
	private void submitAll(Loop loop, ClaimBatch batch, long sent) {
		List<ClaimedTask> tasks = batch.tasks();
		List<ActiveRun> runs = new ArrayList<>(tasks.size());
		List<Permit> permits = new ArrayList<>(tasks.size());
		List<Envelope> envelopes = new ArrayList<>(tasks.size());
		for (int i = 0; i < tasks.size(); i++) {
			try {
				ClaimedTask task = tasks.get(i);
				Envelope envelope = this.runner.read(task.envelope());
				TaskContext context = new TaskContext(task.id(), this.queue, task.failures() + 1, task.deliveries(),
						Instant.ofEpochMilli(task.dueMs()), Instant.ofEpochMilli(task.createdMs()),
						Instant.ofEpochMilli(batch.now()), TaskRunner.headers(envelope), task.token());
				Permit permit = new Permit(loop.permits, this.running);
				// The hold goes back when the task is untracked (outcome recorded,
				// released or lost); so does the permit of a run that never started.
				loop.holds.acquireUninterruptibly();
				runs.add(this.heartbeat.track(task.lease(), context, sent, () -> {
					loop.holds.release();
					permit.free();
				}));
				permits.add(permit);
				envelopes.add(envelope);
			}
			catch (RuntimeException | Error ex) {
				releaseQuietly(tasks.subList(i, tasks.size()));
				releaseRuns(runs);
				throw ex;
			}
		}
		for (int i = 0; i < runs.size(); i++) {
			try {
				submit(runs.get(i), permits.get(i), envelopes.get(i), tasks.get(i).envelope());
			}
			catch (RuntimeException | Error ex) {
				releaseRuns(runs.subList(i, runs.size()));
				throw ex;
			}
		}
	}

	/**
	 * Wait up to the block timeout for a free permit and a free hold.
	 * @param loop the loop whose budgets to wait for
	 * @return how many tasks a claim may lease now, 0 when the wait ended without both
	 */
	private int claimable(Loop loop) throws InterruptedException {
		long block = this.settings.blockTimeout().toMillis();
		loop.idle = true;
		try {
			if (!loop.permits.tryAcquire(block, TimeUnit.MILLISECONDS)) {
				return 0;
			}
			try {
				if (!loop.holds.tryAcquire(block, TimeUnit.MILLISECONDS)) {
					// Outcomes wait to be written: claim again once they are.
					return 0;
				}
				int free = Math.min(loop.permits.availablePermits(), loop.holds.availablePermits()) + 1;
				loop.holds.release();
				return Math.min(free, this.settings.maxClaim());
			}
			finally {
				loop.permits.release();
			}
		}
		finally {
			loop.idle = false;
		}
	}

	private void recover(Deque<String> lostClaims) {
		int recovered = this.store.recover(this.queue, List.copyOf(lostClaims));
		lostClaims.clear();
		if (recovered > 0) {
			logger.info("Gave back " + recovered + " task(s) of queue '" + this.queue
					+ "' leased by claims whose reply was lost");
		}
	}

	private void recoverQuietly(Deque<String> lostClaims) {
		// An interrupt that cut a claim short left the flag set: the call to give its
		// tasks back must still reach Redis.
		boolean interrupted = Thread.interrupted();
		try {
			recover(lostClaims);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not give back the tasks of queue '" + this.queue
					+ "' leased by claims whose reply was lost; they run again after their lease expires: "
					+ ex.getMessage());
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private void submit(ActiveRun run, Permit permit, @Nullable Envelope envelope, String rawEnvelope) {
		if (!permit.acquire()) {
			// Released (at stop) before it was handed over.
			return;
		}
		try {
			this.executor.execute(() -> {
				try {
					this.runner.run(run, envelope, rawEnvelope);
				}
				finally {
					permit.free();
				}
			});
		}
		catch (RuntimeException ex) {
			permit.free();
			throw ex;
		}
	}

	/**
	 * Give back runs that will not be handed to the executor: released at once unless
	 * they were already given up (released at stop, or abandoned).
	 * @param runs the runs
	 */
	private void releaseRuns(List<ActiveRun> runs) {
		List<ActiveRun> released = runs.stream().filter(ActiveRun::release).toList();
		if (!released.isEmpty()) {
			try {
				this.store.release(this.queue, released.stream().map(ActiveRun::lease).toList());
			}
			catch (RuntimeException ex) {
				logger.warn("Could not release " + released.size() + " claimed task(s) of queue '" + this.queue
						+ "'; they run again after their lease expires: " + ex.getMessage());
			}
		}
		runs.forEach(this.heartbeat::untrack);
	}

	private void releaseQuietly(List<ClaimedTask> tasks) {
		if (tasks.isEmpty()) {
			return;
		}
		try {
			this.store.release(this.queue, tasks.stream().map(ClaimedTask::lease).toList());
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release " + tasks.size() + " claimed task(s) of queue '" + this.queue
					+ "'; they run again after their lease expires: " + ex.getMessage());
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** One run of the claim loop, from a start to its stop, with its own budgets. */
	private static final class Loop {

		private final String nonce;

		private final Semaphore permits;

		private final Semaphore holds;

		private volatile boolean live = true;

		/**
		 * Whether the loop waits for a permit, a hold or a wake token: the waits stop may
		 * cut short. An interrupted claim would lose its reply.
		 */
		private volatile boolean idle;

		private @Nullable Thread thread;

		Loop(String nonce, Semaphore permits, Semaphore holds) {
			this.nonce = nonce;
			this.permits = permits;
			this.holds = holds;
		}

	}

	/**
	 * The permit of one run: taken when the run is handed to the executor, given back
	 * once, when its handler returns or when the run ends without starting (an executor
	 * that dropped it, a release at stop), whichever comes first.
	 */
	private static final class Permit {

		private static final int NOT_TAKEN = 0;

		private static final int TAKEN = 1;

		private static final int FREED = 2;

		private final Semaphore permits;

		private final AtomicInteger running;

		private final AtomicInteger state = new AtomicInteger(NOT_TAKEN);

		Permit(Semaphore permits, AtomicInteger running) {
			this.permits = permits;
			this.running = running;
		}

		/**
		 * Take the permit, unless the run already ended.
		 * @return whether it was taken
		 */
		boolean acquire() {
			this.permits.acquireUninterruptibly();
			if (!this.state.compareAndSet(NOT_TAKEN, TAKEN)) {
				this.permits.release();
				return false;
			}
			this.running.incrementAndGet();
			return true;
		}

		void free() {
			if (this.state.compareAndSet(TAKEN, FREED)) {
				this.running.decrementAndGet();
				this.permits.release();
			}
			else {
				this.state.compareAndSet(NOT_TAKEN, FREED);
			}
		}

	}

}

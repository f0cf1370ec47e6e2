package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskHandoff;
import dev.delayedtasks.internal.store.TaskHandoffs;
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
 * <p>
 * With {@link TaskHandoffs} it also takes tasks straight from the {@code enqueue} calls
 * of this process ({@link TaskHandoff}): a call that finds room here (a free permit and a
 * free hold, set aside before it is sent) leases the ready tasks it creates, and the
 * scheduling thread hands them to the executor under the same budgets, so they need no
 * wake-up and no claim.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class Dispatcher {

	private static final Log logger = LogFactory.getLog(Dispatcher.class);

	/** Lost claims remembered for {@code recover}; older ones wait for lease expiry. */
	private static final int MAX_LOST_CLAIMS = 64;

	/**
	 * Longest wait for a queue's rate window before claiming again: a limit changed at
	 * run time takes effect within it.
	 */
	private static final long MAX_RATE_WAIT_MS = 1000;

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

	private final QueueLimits limits;

	private final StoreSettings storeSettings;

	private final @Nullable TaskHandoffs handoffs;

	private final ClaimLoopNonces loopNonces;

	private final AtomicInteger running = new AtomicInteger();

	/**
	 * Nonces of hand-offs whose call failed and whose tasks could not be given back at
	 * once: the claim loop now running, or the next one, recovers them as lost claims.
	 */
	private final Queue<String> lostHandoffs = new ConcurrentLinkedQueue<>();

	/**
	 * The claim loop now running, or {@code null} when stopped. Each start makes a new
	 * one with budgets of its own, so a loop that {@link #stop()} gave up on (stuck in a
	 * call to an unresponsive Redis) and the runs it leaked can never take capacity from
	 * the loop a later start runs.
	 */
	private volatile @Nullable Loop loop;

	Dispatcher(String queue, ContainerSettings container, WorkerServices services, LeaseHeartbeat heartbeat,
			TaskRunner runner) {
		this.queue = queue;
		this.store = services.store();
		this.connections = services.connections();
		this.settings = services.settings();
		this.keys = services.storeSettings().keys(queue);
		this.executor = services.handlerExecutor();
		this.heartbeat = heartbeat;
		this.runner = runner;
		this.listeners = services.listeners();
		this.concurrency = container.concurrency();
		this.limits = container.limits();
		this.storeSettings = services.storeSettings();
		this.handoffs = services.handoffs();
		this.loopNonces = services.loopNonces();
	}

	/**
	 * Start claiming on a new dispatcher thread. Not a daemon: like a message listener
	 * container, a running handler keeps a worker-only application (no web server) alive
	 * until the context is closed.
	 * @param threads makes the queue's threads
	 */
	void start(QueueThreads threads) {
		Loop started = new Loop(this.loopNonces.next(), new Semaphore(this.concurrency),
				new Semaphore(this.concurrency + this.settings.maxClaim()));
		this.loop = started;
		started.thread = threads.start("dispatcher", () -> dispatch(started), false);
		if (this.handoffs != null) {
			started.handoff = new LoopHandoff(started);
			this.handoffs.register(this.queue, started.handoff);
		}
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
		if (this.handoffs != null && stopped.handoff != null) {
			this.handoffs.unregister(this.queue, stopped.handoff);
		}
		// Under the loop's lock: a hand-off that holds it has tracked its runs by the
		// time
		// this returns, so stop sees them; a later one finds the loop stopped.
		synchronized (stopped) {
			stopped.live = false;
		}
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
		boolean limitsConfigured = false;
		while (loop.live) {
			String claimNonce = null;
			try {
				takeLostHandoffs(lostClaims);
				if (!limitsConfigured) {
					configureLimits();
					limitsConfigured = true;
				}
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
				this.listeners.expired(this.queue, batch.expired());
				if (!loop.live) {
					// Stop gave up on this claim: nobody heartbeats or records what it
					// leased, so it goes back at once instead of running here unheld.
					releaseQuietly(batch.tasks());
					break;
				}
				submitAll(loop, batch.tasks(), batch.now(), sent, false);
				if (batch.throttledUntilMs() > 0) {
					long waitFrom = System.nanoTime();
					awaitRateWindow(loop, batch.throttledUntilMs() - batch.now());
					throttledSince(waitFrom);
				}
				else if (batch.tasks().size() < wanted && !batch.more()) {
					// Idle, or at the queue's global concurrency: a lease that ends wakes
					// it.
					if (wake == null) {
						wake = this.connections.open(this.settings.blockTimeout());
					}
					loop.idle = true;
					loop.awaitingWork = true;
					long waitFrom = System.nanoTime();
					try {
						wake.pop(this.settings.blockTimeout(), this.keys.wake());
					}
					finally {
						loop.awaitingWork = false;
						loop.idle = false;
					}
					if (batch.throttledUntilMs() == 0) {
						// Tasks were ready, but the global concurrency was in use.
						throttledSince(waitFrom);
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
		takeLostHandoffs(lostClaims);
		if (!lostClaims.isEmpty()) {
			// A claim interrupted or failed at stop: give its tasks back now rather than
			// after lease + grace (the recover runs after the claim on the connection).
			recoverQuietly(lostClaims);
		}
	}

	private void throttledSince(long waitFrom) {
		this.listeners.throttled(this.queue, Duration.ofNanos(System.nanoTime() - waitFrom));
	}

	private void configureLimits() {
		if (this.store.configureLimits(this.queue, this.limits)) {
			logger.info("Queue '" + this.queue + "': flow control set from configuration: " + this.limits);
		}
	}

	/**
	 * Wait until the queue's rate window lets one more lease, a second at most.
	 * @param loop the loop
	 * @param millis how long, from the claim's Redis time
	 */
	private void awaitRateWindow(Loop loop, long millis) throws InterruptedException {
		loop.idle = true;
		try {
			if (loop.live && millis > 0) {
				Thread.sleep(Math.min(millis, MAX_RATE_WAIT_MS));
			}
		}
		finally {
			loop.idle = false;
		}
	}

	private void takeLostHandoffs(Deque<String> lostClaims) {
		for (String nonce = this.lostHandoffs.poll(); nonce != null; nonce = this.lostHandoffs.poll()) {
			lostClaims.addLast(nonce);
			if (lostClaims.size() > MAX_LOST_CLAIMS) {
				lostClaims.removeFirst();
			}
		}
	}

	/**
	 * Hold every task of a claim before any of them runs, so each is released at stop and
	 * none waits untracked while an earlier one runs on a synchronous or caller-runs
	 * executor; then hand them to the executor one by one.
	 * @param loop the loop that claimed them
	 * @param tasks the leased tasks
	 * @param now the Redis time of the claim, epoch milliseconds
	 * @param sent when the claim was sent: the leases run from then
	 * @param reserved whether a hold and a permit per task were taken already (a
	 * hand-off's reservation)
	 */
	private void submitAll(Loop loop, List<ClaimedTask> tasks, long now, long sent, boolean reserved) {
		List<ActiveRun> runs = new ArrayList<>(tasks.size());
		List<Permit> permits = new ArrayList<>(tasks.size());
		List<Envelope> envelopes = new ArrayList<>(tasks.size());
		for (int i = 0; i < tasks.size(); i++) {
			try {
				ClaimedTask task = tasks.get(i);
				Envelope envelope = this.runner.read(task.envelope());
				TaskContext context = new TaskContext(task.id(), this.queue, task.failures() + 1, task.deliveries(),
						Instant.ofEpochMilli(task.dueMs()), Instant.ofEpochMilli(task.createdMs()),
						Instant.ofEpochMilli(now), TaskRunner.headers(envelope), task.token());
				Permit permit = new Permit(loop.permits, this.running, reserved);
				// The hold goes back when the task is untracked (outcome recorded,
				// released or lost); so does the permit of a run that never started.
				if (!reserved) {
					loop.holds.acquireUninterruptibly();
				}
				runs.add(this.heartbeat.track(task.lease(), context, sent, () -> {
					loop.holds.release();
					permit.free();
				}));
				permits.add(permit);
				envelopes.add(envelope);
			}
			catch (RuntimeException | Error ex) {
				releaseQuietly(tasks.subList(i, tasks.size()));
				if (reserved) {
					loop.giveBack(tasks.size() - i);
				}
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

	/**
	 * The hand-off side of one loop: room is a hold and a permit per task, taken without
	 * waiting, so a call never waits for capacity and a task it leases is always one this
	 * instance can run at once.
	 */
	private final class LoopHandoff implements TaskHandoff {

		private final Loop loop;

		private final AtomicLong calls = new AtomicLong();

		LoopHandoff(Loop loop) {
			this.loop = loop;
		}

		@Override
		public @Nullable Reservation reserve(int max) {
			Loop owner = this.loop;
			// Only while the loop waits for work: a loop that claims has a backlog to
			// take
			// first, and reserving its permits then would only hold it up.
			if (!owner.live || !owner.awaitingWork) {
				return null;
			}
			int limit = Math.min(max, Dispatcher.this.settings.maxClaim());
			int room = 0;
			while (room < limit && owner.holds.tryAcquire()) {
				if (!owner.permits.tryAcquire()) {
					owner.holds.release();
					break;
				}
				room++;
			}
			if (room == 0) {
				return null;
			}
			Dispatcher.this.heartbeat.handoffsExpected(room);
			// '-' never appears in a claim's nonce (the loop's nonce, '.' and base 36;
			// see
			// LeaseHolders), so a recovery by one kind of nonce never matches the other
			// kind's leases.
			String nonce = owner.nonce + "-h" + Long.toString(this.calls.incrementAndGet(), 36);
			return new HandoffReservation(owner, room, Dispatcher.this.storeSettings.handoffLease(nonce, room));
		}

	}

	/** Room set aside in one loop for the tasks of one {@code enqueue} call. */
	private final class HandoffReservation implements TaskHandoff.Reservation {

		private final Loop loop;

		private final int room;

		private final TaskHandoff.HandoffLease lease;

		HandoffReservation(Loop loop, int room, TaskHandoff.HandoffLease lease) {
			this.loop = loop;
			this.room = room;
			this.lease = lease;
		}

		@Override
		public TaskHandoff.HandoffLease lease() {
			return this.lease;
		}

		@Override
		public void accept(List<ClaimedTask> tasks, long redisNowMs, long sentNanos) {
			List<ClaimedTask> taken = (tasks.size() > this.room) ? tasks.subList(0, this.room) : tasks;
			this.loop.giveBack(this.room - taken.size());
			// Never throws into the scheduling thread: the tasks are stored, and what
			// cannot
			// run here is given back or comes back after its lease.
			try {
				if (!taken.isEmpty()) {
					handOver(taken, redisNowMs, sentNanos);
				}
			}
			catch (RuntimeException | Error ex) {
				logger.warn("Could not hand " + taken.size() + " task(s) of queue '" + Dispatcher.this.queue
						+ "' to their handlers; they were given back or run again after their lease: " + ex);
			}
			finally {
				Dispatcher.this.heartbeat.handoffsSettled(this.room);
			}
		}

		private void handOver(List<ClaimedTask> tasks, long redisNowMs, long sentNanos) {
			synchronized (this.loop) {
				if (!this.loop.live) {
					this.loop.giveBack(tasks.size());
					releaseQuietly(tasks);
					return;
				}
				submitAll(this.loop, tasks, redisNowMs, sentNanos, true);
			}
		}

		/**
		 * Give back at once, on the calling thread, whatever the call leased: the
		 * dispatcher may be blocked on its wake list for up to the block timeout, or
		 * stopped. On a shared connection it runs after the failed call's script, if that
		 * ran at all; as it may not (a connection pool, or Redis unreachable now), the
		 * claim loop (this one or the next start's) gives the nonce back once more.
		 */
		@Override
		public void lost() {
			this.loop.giveBack(this.room);
			Dispatcher.this.heartbeat.handoffsSettled(this.room);
			String nonce = this.lease.nonce();
			try {
				int recovered = Dispatcher.this.store.recover(Dispatcher.this.queue, List.of(nonce));
				if (recovered > 0) {
					logger.info("Gave back " + recovered + " task(s) of queue '" + Dispatcher.this.queue
							+ "' leased by a call whose reply was lost");
				}
			}
			catch (RuntimeException ex) {
				logger.debug("Could not give back at once the tasks of a lost call of queue '" + Dispatcher.this.queue
						+ "': " + ex.getMessage());
			}
			Dispatcher.this.lostHandoffs.add(nonce);
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

		/**
		 * Whether the loop waits on the wake list: its last claim emptied the ready list,
		 * so a hand-off cannot overtake a backlog.
		 */
		private volatile boolean awaitingWork;

		private @Nullable Thread thread;

		private @Nullable LoopHandoff handoff;

		Loop(String nonce, Semaphore permits, Semaphore holds) {
			this.nonce = nonce;
			this.permits = permits;
			this.holds = holds;
		}

		/**
		 * Free the holds and permits of a reservation that were not used.
		 * @param room how many of each
		 */
		void giveBack(int room) {
			if (room > 0) {
				this.holds.release(room);
				this.permits.release(room);
			}
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

		/** Whether the semaphore's permit was taken when the run was reserved. */
		private final boolean reserved;

		Permit(Semaphore permits, AtomicInteger running, boolean reserved) {
			this.permits = permits;
			this.running = running;
			this.reserved = reserved;
		}

		/**
		 * Take the permit, unless the run already ended.
		 * @return whether it was taken
		 */
		boolean acquire() {
			if (!this.reserved) {
				this.permits.acquireUninterruptibly();
			}
			if (!this.state.compareAndSet(NOT_TAKEN, TAKEN)) {
				if (!this.reserved) {
					this.permits.release();
				}
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
			else if (this.state.compareAndSet(NOT_TAKEN, FREED) && this.reserved) {
				// A reserved run that never started still holds its semaphore permit.
				this.permits.release();
			}
		}

	}

}

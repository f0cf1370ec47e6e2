package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
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

	private final Semaphore permits;

	private final Semaphore holds;

	private final AtomicInteger running = new AtomicInteger();

	private volatile boolean started;

	/**
	 * Whether the loop waits for a permit, a hold or a wake token: the waits stop may cut
	 * short. An interrupted claim would lose its reply.
	 */
	private volatile boolean idle;

	private @Nullable Thread thread;

	private String nonce = "";

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
		this.permits = new Semaphore(concurrency);
		this.holds = new Semaphore(concurrency + this.settings.maxClaim());
	}

	/**
	 * Start claiming on a new dispatcher thread. Not a daemon: like a message listener
	 * container, a running handler keeps a worker-only application (no web server) alive
	 * until the context is closed.
	 * @param threads makes the queue's threads
	 */
	void start(QueueThreads threads) {
		this.started = true;
		this.nonce = UUID.randomUUID().toString().substring(0, 8);
		this.thread = threads.start("dispatcher", this::dispatch, false);
	}

	/**
	 * Stop claiming and wait for the loop to end. Only an idle wait is cut short: it sees
	 * the stop next, before any claim. An interrupt inside a claim would lose the claimed
	 * tasks' reply.
	 */
	void stop() {
		this.started = false;
		Thread loop = this.thread;
		if (loop == null) {
			return;
		}
		if (this.idle) {
			loop.interrupt();
		}
		try {
			loop.join(this.settings.blockTimeout().plusSeconds(2).toMillis());
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

	private void dispatch() {
		BlockingConnection wake = null;
		long backOff = 0;
		long claims = 0;
		Deque<String> lostClaims = new ArrayDeque<>();
		ThrottledWarning failures = new ThrottledWarning(logger, Duration.ofMinutes(1));
		while (this.started) {
			String claimNonce = null;
			try {
				int wanted = claimable();
				if (wanted == 0) {
					continue;
				}
				if (!lostClaims.isEmpty()) {
					recover(lostClaims);
				}
				claimNonce = this.nonce + "." + Long.toString(++claims, 36);
				ClaimBatch batch = this.store.claim(this.queue, wanted, claimNonce);
				claimNonce = null;
				reportExpired(batch.expired());
				List<ClaimedTask> tasks = batch.tasks();
				for (int i = 0; i < tasks.size(); i++) {
					try {
						submit(tasks.get(i), batch.now());
					}
					catch (RuntimeException | Error ex) {
						releaseQuietly(tasks.subList(i + 1, tasks.size()));
						throw ex;
					}
				}
				if (batch.tasks().size() < wanted && !batch.more()) {
					if (wake == null) {
						wake = this.connections.open(this.settings.blockTimeout());
					}
					this.idle = true;
					try {
						wake.pop(this.settings.blockTimeout(), this.keys.wake());
					}
					finally {
						this.idle = false;
					}
				}
				// Only a whole round resets: a claim that works followed by a BLPOP that
				// keeps failing (a user without +blpop) must still back off and warn
				// once a minute, not spin and flood the log.
				backOff = 0;
				failures.reset();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				break;
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
				if (!this.started) {
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
	}

	/**
	 * Wait up to the block timeout for a free permit and a free hold.
	 * @return how many tasks a claim may lease now, 0 when the wait ended without both
	 */
	private int claimable() throws InterruptedException {
		long block = this.settings.blockTimeout().toMillis();
		this.idle = true;
		try {
			if (!this.permits.tryAcquire(block, TimeUnit.MILLISECONDS)) {
				return 0;
			}
			try {
				if (!this.holds.tryAcquire(block, TimeUnit.MILLISECONDS)) {
					// Outcomes wait to be written: claim again once they are.
					return 0;
				}
				int free = Math.min(this.permits.availablePermits(), this.holds.availablePermits()) + 1;
				this.holds.release();
				return Math.min(free, this.settings.maxClaim());
			}
			finally {
				this.permits.release();
			}
		}
		finally {
			this.idle = false;
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

	private void submit(ClaimedTask task, long claimedAt) {
		Envelope envelope = this.runner.read(task.envelope());
		TaskContext context = new TaskContext(task.id(), this.queue, task.failures() + 1, task.deliveries(),
				Instant.ofEpochMilli(task.dueMs()), Instant.ofEpochMilli(task.createdMs()),
				Instant.ofEpochMilli(claimedAt), TaskRunner.headers(envelope), task.token());
		// The hold goes back when the task is untracked (outcome recorded, released or
		// lost), the permit when its handler returns.
		this.holds.acquireUninterruptibly();
		this.permits.acquireUninterruptibly();
		ActiveRun run = this.heartbeat.track(task.lease(), context, this.holds::release);
		this.running.incrementAndGet();
		try {
			this.executor.execute(() -> {
				try {
					this.runner.run(run, envelope, task.envelope());
				}
				finally {
					this.running.decrementAndGet();
					this.permits.release();
				}
			});
		}
		catch (RuntimeException ex) {
			this.running.decrementAndGet();
			this.permits.release();
			this.heartbeat.untrack(run);
			releaseQuietly(List.of(task));
			throw ex;
		}
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

}

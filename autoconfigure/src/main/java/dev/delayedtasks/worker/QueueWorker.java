package dev.delayedtasks.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.store.ClaimBatch;
import dev.delayedtasks.store.ClaimedTask;
import dev.delayedtasks.store.PartitionKeys;
import dev.delayedtasks.store.PayloadCodec.Envelope;
import dev.delayedtasks.store.TaskStore;
import dev.delayedtasks.worker.BlockingConnections.BlockingConnection;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Runs one handler's queue on this instance: a dispatcher thread that claims tasks while
 * permits are free and otherwise blocks on the queue's wake list, the worker threads that
 * run handlers, the lease heartbeat, the completion path, and the queue's
 * {@link PromotionTimer}.
 * <p>
 * Two budgets bound the dispatcher: a permit per running handler ({@code concurrency}),
 * freed when the handler returns, and a hold per task this instance holds, from its claim
 * until its outcome is recorded in Redis or it is released ({@code concurrency +
 * max-claim}). So outcomes are written while the next tasks run, yet however fast
 * handlers fail, an instance never holds more than its concurrency plus one claim. The
 * heartbeat and the timer each run on a thread of the queue's own: a Redis node that
 * stalls delays only the queues it holds.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class QueueWorker implements HandlerContainer {

	private static final Log logger = LogFactory.getLog(QueueWorker.class);

	/** Lost claims remembered for {@code recover}; older ones wait for lease expiry. */
	private static final int MAX_LOST_CLAIMS = 64;

	private final HandlerEndpoint endpoint;

	private final ContainerSettings container;

	private final TaskStore store;

	private final BlockingConnections connections;

	private final WorkerSettings settings;

	private final PartitionKeys keys;

	private final ScheduledExecutorService timeouts;

	private final Semaphore permits;

	private final Semaphore holds;

	private final LeaseHeartbeat heartbeat;

	private final Completions completions;

	private final TaskRunner runner;

	private final PromotionTimer timer;

	private final AtomicInteger running = new AtomicInteger();

	private volatile boolean started;

	/**
	 * Whether the dispatcher waits for a permit, a hold or a wake token: the waits stop
	 * may cut short. An interrupted claim would lose its reply.
	 */
	private volatile boolean idle;

	private @Nullable Thread dispatcher;

	private @Nullable Executor executor;

	private String nonce = "";

	QueueWorker(HandlerEndpoint endpoint, ContainerSettings container, WorkerServices services) {
		this.endpoint = endpoint;
		this.container = container;
		this.store = services.store();
		this.connections = services.connections();
		this.settings = services.settings();
		this.keys = services.storeSettings().keys(endpoint.queue());
		this.timeouts = services.timeouts();
		this.permits = new Semaphore(container.concurrency());
		this.holds = new Semaphore(container.concurrency() + this.settings.maxClaim());
		this.heartbeat = new LeaseHeartbeat(endpoint.queue(), this.store, this.settings);
		this.completions = new Completions(endpoint.queue(), this.store, this.heartbeat, services.listeners());
		this.runner = new TaskRunner(endpoint, container, services.codec(), services.failureRouter(), this.completions,
				services.listeners(), services.timeouts(), services.observations());
		this.timer = new PromotionTimer(endpoint.queue(), this.keys, this.store, services.instanceId(), this.settings,
				this.connections);
	}

	@Override
	public synchronized void start() {
		if (this.started) {
			return;
		}
		this.started = true;
		this.nonce = UUID.randomUUID().toString().substring(0, 8);
		this.executor = this.settings.virtualThreads() ? virtualThreads()
				: Executors.newFixedThreadPool(this.container.concurrency(),
						new CustomizableThreadFactory("delayed-tasks-" + this.endpoint.queue() + "-"));
		this.completions.start();
		this.heartbeat.start(this.timeouts);
		this.timer.start();
		Thread thread = new Thread(this::dispatch, "delayed-tasks-dispatcher-" + this.endpoint.queue());
		// Not a daemon: like a message listener container, a running handler keeps a
		// worker-only application (no web server) alive until the context is closed.
		thread.setDaemon(false);
		this.dispatcher = thread;
		thread.start();
		logger.info("Started handler " + this.endpoint);
	}

	/**
	 * A virtual thread per run; the permits bound how many run at once, so there is no
	 * pool to size or shut down.
	 */
	private Executor virtualThreads() {
		SimpleAsyncTaskExecutor virtual = new SimpleAsyncTaskExecutor("delayed-tasks-" + this.endpoint.queue() + "-");
		virtual.setVirtualThreads(true);
		return virtual;
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
				ClaimBatch batch = this.store.claim(this.endpoint.queue(), wanted, claimNonce);
				claimNonce = null;
				List<ClaimedTask> tasks = batch.tasks();
				for (int i = 0; i < tasks.size(); i++) {
					try {
						submit(tasks.get(i), batch.now());
					}
					catch (RuntimeException ex) {
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
			catch (RuntimeException ex) {
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
				failures.warn("Dispatcher of queue '" + this.endpoint.queue() + "' failed, retrying in up to 1 s: "
						+ ex.getMessage());
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
		int recovered = this.store.recover(this.endpoint.queue(), List.copyOf(lostClaims));
		lostClaims.clear();
		if (recovered > 0) {
			logger.info("Gave back " + recovered + " task(s) of queue '" + this.endpoint.queue()
					+ "' leased by claims whose reply was lost");
		}
	}

	private void submit(ClaimedTask task, long claimedAt) {
		Envelope envelope = this.runner.read(task.envelope());
		TaskContext context = new TaskContext(task.id(), this.endpoint.queue(), task.failures() + 1, task.deliveries(),
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
			this.store.release(this.endpoint.queue(), tasks.stream().map(ClaimedTask::lease).toList());
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release " + tasks.size() + " claimed task(s) of queue '" + this.endpoint.queue()
					+ "'; they run again after their lease expires: " + ex.getMessage());
		}
	}

	/**
	 * Stop claiming, hand the timer over and release at once the claimed tasks whose
	 * handlers have not started. Running handlers are interrupted (at once, or, without
	 * {@code interrupt-on-shutdown}, after most of the shutdown timeout has been left for
	 * them to finish) and get the rest of the timeout to return. Only tasks whose
	 * handlers returned without an outcome are released; a handler still running at the
	 * end keeps its lease, so its task is reaped after lease + grace and never handed
	 * over while it runs. Holds the lifecycle lock throughout, so a concurrent
	 * {@link #start()} waits for it instead of sharing half-stopped parts.
	 */
	@Override
	public synchronized void stop() {
		if (!this.started) {
			return;
		}
		// Shutdown must reach Redis even when the caller was interrupted; the flag is
		// restored at the end.
		boolean interrupted = Thread.interrupted();
		this.started = false;
		if (this.dispatcher != null) {
			// Only an idle wait is cut short: it sees started = false next, before any
			// claim. An interrupt inside a claim would lose the claimed tasks' reply.
			if (this.idle) {
				this.dispatcher.interrupt();
			}
			join(this.dispatcher);
		}
		this.timer.stop();
		long timeout = this.settings.shutdownTimeout().toNanos();
		long deadline = System.nanoTime() + timeout;
		List<ActiveRun> held = this.heartbeat.active();
		releaseUnstarted(held);
		if (!this.settings.interruptOnShutdown()) {
			awaitHandlers(held, deadline - Math.min(TimeUnit.SECONDS.toNanos(1), timeout / 4));
		}
		held.forEach((run) -> run.stop(ActiveRun.SHUTDOWN));
		awaitHandlers(held, deadline);
		releaseUnstarted(held);
		List<ActiveRun> stillRunning = held.stream().filter(ActiveRun::isHandlerRunning).toList();
		if (!stillRunning.isEmpty()) {
			logger.warn(stillRunning.size() + " handler(s) of queue '" + this.endpoint.queue()
					+ "' still run after the shutdown timeout of " + this.settings.shutdownTimeout()
					+ "; their tasks keep their leases and run again after lease + grace: "
					+ stillRunning.stream().map((run) -> run.lease().id().value()).toList());
		}
		this.completions.stop(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())).plusSeconds(1));
		this.heartbeat.stop();
		stillRunning.forEach(this.heartbeat::untrack);
		if (this.executor instanceof ExecutorService pool) {
			pool.shutdown();
		}
		logger.info("Stopped handler " + this.endpoint);
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

	private static void awaitHandlers(List<ActiveRun> runs, long deadline) {
		while (runs.stream().anyMatch(ActiveRun::isHandlerRunning) && System.nanoTime() - deadline < 0) {
			sleep(10);
		}
	}

	/**
	 * Release, without penalty, the held tasks whose handlers never started or gave up
	 * when shutdown interrupted them, so another instance runs them at once.
	 */
	private void releaseUnstarted(List<ActiveRun> held) {
		List<ActiveRun> released = held.stream().filter(ActiveRun::release).toList();
		if (released.isEmpty()) {
			return;
		}
		try {
			this.store.release(this.endpoint.queue(), released.stream().map(ActiveRun::lease).toList());
			logger.info("Released " + released.size() + " task(s) of queue '" + this.endpoint.queue()
					+ "' whose handlers stopped or never started, so another instance runs them now");
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release " + released.size() + " task(s) of queue '" + this.endpoint.queue()
					+ "'; they run again after their lease expires: " + ex.getMessage());
		}
		released.forEach(this.heartbeat::untrack);
	}

	private void join(Thread thread) {
		try {
			thread.join(this.settings.blockTimeout().plusSeconds(2).toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
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

	@Override
	public String id() {
		return this.endpoint.id();
	}

	@Override
	public String queue() {
		return this.endpoint.queue();
	}

	@Override
	public int concurrency() {
		return this.container.concurrency();
	}

	@Override
	public @Nullable Duration timeout() {
		return this.container.timeout();
	}

	@Override
	public RetryPolicy retryPolicy() {
		return this.container.retryPolicy();
	}

	@Override
	public int activeTasks() {
		return this.running.get();
	}

	@Override
	public boolean isRunning() {
		return this.started;
	}

	@Override
	public boolean isTimerOwner() {
		return this.timer.isOwner();
	}

	HandlerEndpoint endpoint() {
		return this.endpoint;
	}

}

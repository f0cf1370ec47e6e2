package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.worker.HandlerContainer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryPolicy;
import org.springframework.scheduling.TaskScheduler;

/**
 * The container of one handler on this instance: owns the lifecycle (start and stop) of
 * its queue's {@link Dispatcher}, lease heartbeat, completion path and
 * {@link PromotionTimer}. Handlers run on the shared handler executor, at most
 * {@code concurrency} of them at once; the dispatcher, the heartbeat, the timer and the
 * completion path each run on threads of the queue's own ({@link QueueThreads}), so a
 * Redis node that stalls delays only the queues it holds.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class QueueWorker implements HandlerContainer {

	private static final Log logger = LogFactory.getLog(QueueWorker.class);

	private final HandlerEndpoint endpoint;

	private final ContainerSettings container;

	private final TaskStore store;

	private final WorkerSettings settings;

	private final QueueThreads threads;

	private final TaskScheduler scheduler;

	private final LeaseHeartbeat heartbeat;

	private final Completions completions;

	private final Dispatcher dispatcher;

	private final PromotionTimer timer;

	private volatile boolean started;

	QueueWorker(HandlerEndpoint endpoint, ContainerSettings container, WorkerServices services) {
		this.endpoint = endpoint;
		this.container = container;
		this.store = services.store();
		this.settings = services.settings();
		this.threads = new QueueThreads(endpoint.queue());
		this.scheduler = services.scheduler();
		this.heartbeat = new LeaseHeartbeat(endpoint.queue(), this.store, this.settings);
		this.completions = new Completions(endpoint.queue(), this.store, this.heartbeat, services.listeners());
		TaskRunner runner = new TaskRunner(endpoint, container, services.codec(), services.failureRouter(),
				this.completions, services.listeners(), services.scheduler(), services.observations(),
				services.occurrenceGate());
		this.dispatcher = new Dispatcher(endpoint.queue(), container, services, this.heartbeat, runner);
		this.timer = new PromotionTimer(endpoint.queue(), services.storeSettings().keys(endpoint.queue()), this.store,
				services.instanceId(), this.settings, services.connections(), services.handoffs(),
				services.listeners());
	}

	@Override
	public synchronized void start() {
		if (this.started) {
			return;
		}
		this.started = true;
		this.completions.start(this.threads);
		this.heartbeat.start(this.threads, this.scheduler);
		this.timer.start(this.threads);
		this.dispatcher.start(this.threads);
		logger.info("Started handler " + this.endpoint);
	}

	/**
	 * Stop on a thread of the queue's own, so that the registry stops every queue at once
	 * and the whole shutdown stays within one shutdown timeout.
	 * @return the stopping thread, to join
	 */
	public Thread stopInBackground() {
		return this.threads.start("stop", this::stop, false);
	}

	/**
	 * Stop claiming, hand the timer over and release at once the claimed tasks whose
	 * handlers have not started. Running handlers are interrupted (at once, or, without
	 * {@code interrupt-on-shutdown}, after most of the shutdown timeout has been left for
	 * them to finish) and get the rest of the timeout to return. Only tasks whose
	 * handlers returned without an outcome are released; a handler still running at the
	 * end keeps its lease, so its task is reaped after lease + grace and never handed
	 * over while it runs. Every wait (for the dispatcher, the timer, the handlers and the
	 * outcomes) counts against the one shutdown timeout, and whatever this start still
	 * holds at the end is let go, so a later {@link #start()} begins with the whole
	 * capacity. Holds the lifecycle lock throughout, so a concurrent {@link #start()}
	 * waits for it instead of sharing half-stopped parts.
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
		long timeout = this.settings.shutdownTimeout().toNanos();
		long deadline = System.nanoTime() + timeout;
		// Handlers hear of the stop first, before any call to Redis or wait for another
		// thread: they get the whole budget to return, even when Redis stalls or a
		// handler runs on the dispatcher's own thread (a caller-runs executor).
		Thread dispatching = this.dispatcher.stopClaiming();
		List<ActiveRun> held = this.heartbeat.active();
		if (!this.settings.interruptOnShutdown()) {
			awaitHandlers(held, deadline - Math.min(TimeUnit.SECONDS.toNanos(1), timeout / 4));
		}
		held.forEach((run) -> run.stop(ActiveRun.SHUTDOWN));
		this.timer.stop(deadline);
		releaseUnstarted(held);
		awaitHandlers(held, deadline);
		this.dispatcher.awaitStopped(dispatching, deadline);
		// And the runs of a claim the dispatcher was handing out when claiming stopped.
		held = this.heartbeat.active();
		held.forEach((run) -> run.stop(ActiveRun.SHUTDOWN));
		awaitHandlers(held, deadline);
		List<ActiveRun> stillRunning = held.stream().filter(ActiveRun::isHandlerRunning).toList();
		// After the running ones are known: a handler that returns for release between
		// the two is released here, not left behind.
		releaseUnstarted(held);
		if (!stillRunning.isEmpty()) {
			logger.warn(stillRunning.size() + " handler(s) of queue '" + this.endpoint.queue()
					+ "' still run after the shutdown timeout of " + this.settings.shutdownTimeout()
					+ "; their tasks keep their leases and run again after lease + grace: "
					+ stillRunning.stream().map((run) -> run.lease().id().value()).toList());
		}
		this.completions.stop(deadline);
		this.heartbeat.stop();
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
	 * @param held the runs this instance still holds
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
		return this.dispatcher.activeTasks();
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

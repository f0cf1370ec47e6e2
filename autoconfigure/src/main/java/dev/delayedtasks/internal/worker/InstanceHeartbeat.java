package dev.delayedtasks.internal.worker;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisInstanceRegistry.HandlerRecord;
import dev.delayedtasks.internal.store.RedisInstanceRegistry.InstanceRecord;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * Reports this instance to the {@link RedisInstanceRegistry} every {@link #INTERVAL}, on
 * a daemon thread of its own: its id (the one that names it as a timer owner), host,
 * process, and each handler's queue, concurrency, tasks running and timer ownership. The
 * entry lives {@link #TIME_TO_LIVE} on Redis's clock, so a crashed instance leaves the
 * list within it; a graceful stop takes it out once the handlers have stopped. A failure
 * is logged once per outage and never stops the reports.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public final class InstanceHeartbeat implements SmartLifecycle {

	/**
	 * How often the instance reports itself.
	 */
	public static final Duration INTERVAL = Duration.ofSeconds(10);

	/**
	 * How long a report lives without the next one.
	 */
	public static final Duration TIME_TO_LIVE = Duration.ofSeconds(30);

	private static final Log logger = LogFactory.getLog(InstanceHeartbeat.class);

	private final RedisInstanceRegistry registry;

	private final String instanceId;

	private final String application;

	private final Supplier<Collection<HandlerContainer>> handlers;

	private final Clock clock;

	private @Nullable ScheduledExecutorService executor;

	private @Nullable Instant startedAt;

	private @Nullable String host;

	private volatile boolean failing;

	/**
	 * Create the heartbeat.
	 * @param registry the registry
	 * @param instanceId this instance's id
	 * @param application the application's name, or empty
	 * @param handlers this instance's handlers now
	 * @param clock the clock of the times reported
	 */
	public InstanceHeartbeat(RedisInstanceRegistry registry, String instanceId, String application,
			Supplier<Collection<HandlerContainer>> handlers, Clock clock) {
		this.registry = registry;
		this.instanceId = instanceId;
		this.application = application;
		this.handlers = handlers;
		this.clock = clock;
	}

	@Override
	public synchronized void start() {
		if (this.executor != null) {
			return;
		}
		this.startedAt = this.clock.instant();
		ScheduledExecutorService started = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "delayed-tasks-instance");
			thread.setDaemon(true);
			return thread;
		});
		started.scheduleWithFixedDelay(this::report, 0, INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
		// The handlers start after this (a later phase): reported running a moment later,
		// not only at the next interval.
		started.schedule(this::report, 1, TimeUnit.SECONDS);
		this.executor = started;
	}

	@Override
	public synchronized void stop() {
		if (this.executor == null) {
			return;
		}
		this.executor.shutdownNow();
		this.executor = null;
		try {
			this.registry.leave(this.instanceId);
		}
		catch (RuntimeException ex) {
			// Redis away at the stop: the entry expires on its own.
			logger.debug("Could not take instance '" + this.instanceId + "' out of the registry; its entry expires in "
					+ TIME_TO_LIVE.toSeconds() + " s: " + ex);
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.executor != null;
	}

	/**
	 * Stops after the handlers, so that an instance finishing its tasks at a graceful
	 * stop is listed until they are done.
	 * @return the phase
	 */
	@Override
	public int getPhase() {
		return DelayedTaskHandlerRegistry.PHASE - 1;
	}

	/**
	 * Report this instance once.
	 */
	void report() {
		try {
			List<HandlerRecord> handlers = this.handlers.get()
				.stream()
				.map((handler) -> new HandlerRecord(handler.queue(), handler.concurrency(), handler.activeTasks(),
						handler.isRunning(), handler.isTimerOwner()))
				.toList();
			Instant started = this.startedAt;
			this.registry.report(
					new InstanceRecord(this.instanceId, host(), ProcessHandle.current().pid(), this.application,
							(started != null) ? started : this.clock.instant(), this.clock.instant(), handlers),
					TIME_TO_LIVE);
			if (this.failing) {
				logger.info("Reporting instance '" + this.instanceId + "' to the instance registry works again");
				this.failing = false;
			}
		}
		catch (RuntimeException | Error ex) {
			if (!this.failing) {
				logger.warn("Reporting instance '" + this.instanceId + "' to the instance registry failed; retrying "
						+ "every " + INTERVAL.toSeconds() + " s: " + ex);
				this.failing = true;
			}
		}
	}

	// Looked up on the heartbeat's thread: a slow name service must not hold up the
	// start.
	private String host() {
		String known = this.host;
		if (known == null) {
			try {
				known = InetAddress.getLocalHost().getHostName();
			}
			catch (UnknownHostException ex) {
				known = "unknown";
			}
			this.host = known;
		}
		return known;
	}

}

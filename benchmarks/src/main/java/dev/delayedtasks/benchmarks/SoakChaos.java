package dev.delayedtasks.benchmarks;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * The soak's faults: a worker killed with SIGKILL (and replaced) at random intervals, and
 * Redis stopped once, a third into the run. Both run on one thread, so a kill never falls
 * into the outage. Each kill notes the runs the killed worker had in flight, so that
 * their recovery can be measured.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class SoakChaos {

	private static final Log logger = LogFactory.getLog(SoakChaos.class);

	/**
	 * Time between a kill and the outage, so that the killed worker's runs are recovered
	 * first and each recovery measured is a kill's alone.
	 */
	private static final Duration QUIET_BEFORE_OUTAGE = Duration.ofSeconds(10);

	private final SoakWorkers workers;

	private final SoakLedger ledger;

	private final RedisOutage outage;

	private final BenchmarkProperties.Soak settings;

	private final SplittableRandom random;

	private final PrintStream out;

	private final long startNanos = System.nanoTime();

	private final ScheduledExecutorService thread;

	private final List<Kill> kills = new CopyOnWriteArrayList<>();

	private volatile RedisOutage.@Nullable Stop outageStop;

	private volatile long lastKillMillis;

	SoakChaos(SoakWorkers workers, SoakLedger ledger, RedisOutage outage, BenchmarkProperties.Soak settings, long seed,
			PrintStream out) {
		this.workers = workers;
		this.ledger = ledger;
		this.outage = outage;
		this.settings = settings;
		this.random = new SplittableRandom(seed);
		this.out = out;
		CustomizableThreadFactory threads = new CustomizableThreadFactory("soak-chaos-");
		threads.setDaemon(true);
		this.thread = Executors.newSingleThreadScheduledExecutor(threads);
	}

	void start() {
		scheduleNextKill();
		String unavailable = this.outage.unavailableReason();
		if (this.settings.outage().isZero()) {
			this.out.println("soak note=no_outage reason=bench.soak.outage_is_0");
		}
		else if (unavailable != null) {
			this.out.println("soak note=no_outage reason=" + unavailable.replace(' ', '_'));
		}
		else {
			this.thread.schedule(this::stopRedis, this.settings.duration().toMillis() / 3, TimeUnit.MILLISECONDS);
		}
	}

	/**
	 * Stop injecting faults; an outage in progress ends at once.
	 */
	void stop() {
		this.thread.shutdownNow();
		try {
			if (!this.thread.awaitTermination(1, TimeUnit.MINUTES)) {
				logger.warn("Soak: the fault thread did not end");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	List<Kill> kills() {
		return List.copyOf(this.kills);
	}

	/**
	 * When Redis was stopped.
	 * @return the outage, or {@code null} when Redis was not stopped
	 */
	RedisOutage.@Nullable Stop outage() {
		return this.outageStop;
	}

	private void scheduleNextKill() {
		long min = this.settings.minKillInterval().toMillis();
		long max = Math.max(min, this.settings.maxKillInterval().toMillis());
		this.thread.schedule(this::killOne, min + this.random.nextLong(max - min + 1), TimeUnit.MILLISECONDS);
	}

	private void killOne() {
		try {
			SoakWorkers.Killed killed = this.workers.replaceOne(this.random);
			if (killed != null) {
				Map<String, Integer> inFlight = this.ledger.takeInFlight(killed.pid());
				this.kills.add(new Kill(killed.atMillis(), inFlight));
				this.lastKillMillis = killed.atMillis();
				this.out.println("soak event=kill elapsed_s=" + elapsedSeconds() + " pid=" + killed.pid()
						+ " in_flight=" + inFlight.size() + " kills=" + this.kills.size());
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Soak: killing a worker failed", ex);
		}
		if (!this.thread.isShutdown()) {
			scheduleNextKill();
		}
	}

	private void stopRedis() {
		long sinceKill = System.currentTimeMillis() - this.lastKillMillis;
		if (sinceKill < QUIET_BEFORE_OUTAGE.toMillis()) {
			this.thread.schedule(this::stopRedis, QUIET_BEFORE_OUTAGE.toMillis() - sinceKill, TimeUnit.MILLISECONDS);
			return;
		}
		Duration length = this.settings.outage();
		this.out.println("soak event=outage_start elapsed_s=" + elapsedSeconds() + " planned_s=" + length.toSeconds());
		RedisOutage.Stop stop = this.outage.stopFor(length);
		this.outageStop = stop;
		this.out
			.println("soak event=outage_end elapsed_s=" + elapsedSeconds() + " stopped_ms=" + stop.length().toMillis());
	}

	private long elapsedSeconds() {
		return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - this.startNanos);
	}

	/**
	 * A worker kill.
	 *
	 * @param atMillis when, local epoch milliseconds (the workers run on this host, so
	 * their clock is the same)
	 * @param inFlight task id to the delivery of each run the worker had in flight
	 */
	record Kill(long atMillis, Map<String, Integer> inFlight) {

	}

}

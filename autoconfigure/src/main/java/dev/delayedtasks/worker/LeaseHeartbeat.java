package dev.delayedtasks.worker;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.store.Lease;
import dev.delayedtasks.store.TaskStore;
import dev.delayedtasks.store.TaskStore.ExtendOutcome;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Extends the leases of a queue's running tasks in one batch every third of the lease. A
 * lease that Redis reports lost, or that could not be extended before it ran out, stops
 * being this worker's: its handler is interrupted and its outcome will not be recorded. A
 * cancel request interrupts the handler too.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class LeaseHeartbeat {

	private static final Log logger = LogFactory.getLog(LeaseHeartbeat.class);

	private final String queue;

	private final TaskStore store;

	private final long leaseNanos;

	private final Map<String, ActiveRun> runs = new ConcurrentHashMap<>();

	LeaseHeartbeat(String queue, TaskStore store, WorkerSettings settings) {
		this.queue = queue;
		this.store = store;
		// Keep a safety margin below the real lease: the local clock starts after
		// Redis's.
		this.leaseNanos = settings.leaseDuration().toNanos() * 9 / 10;
	}

	ActiveRun track(Lease lease, dev.delayedtasks.TaskContext context) {
		ActiveRun run = new ActiveRun(lease, context, System.nanoTime() + this.leaseNanos);
		this.runs.put(lease.id().value(), run);
		return run;
	}

	void untrack(ActiveRun run) {
		this.runs.remove(run.lease().id().value(), run);
	}

	List<ActiveRun> active() {
		return new ArrayList<>(this.runs.values());
	}

	void beat() {
		List<ActiveRun> current = active();
		if (current.isEmpty()) {
			return;
		}
		long sent = System.nanoTime();
		// A lease that ran out locally (extensions failed or were late) is no longer
		// ours, whatever Redis says.
		for (ActiveRun run : current) {
			if (run.isRunning() && run.leaseExpiredAt(sent)) {
				run.stop("lease-lost");
			}
		}
		try {
			List<ExtendOutcome> outcomes = this.store.extend(this.queue,
					current.stream().map(ActiveRun::lease).toList());
			for (int i = 0; i < current.size(); i++) {
				ActiveRun run = current.get(i);
				switch (outcomes.get(i)) {
					case EXTENDED -> run.extendedUntil(sent + this.leaseNanos);
					case CANCEL_REQUESTED -> {
						run.extendedUntil(sent + this.leaseNanos);
						run.stop("cancelled");
					}
					case LOST -> {
						if (!run.isRunning()) {
							// Completed while the extension was on its way: the task is
							// gone because it was acknowledged, not because it was taken.
							continue;
						}
						logger.warn("Task " + run.lease().id() + " of queue '" + this.queue
								+ "' lost its lease (another worker may run it now); interrupting its handler");
						run.stop("lease-lost");
					}
				}
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not extend the leases of queue '" + this.queue + "': " + ex.getMessage());
			long now = System.nanoTime();
			for (ActiveRun run : current) {
				if (run.leaseExpiredAt(now)) {
					run.stop("lease-lost");
				}
			}
		}
	}

}

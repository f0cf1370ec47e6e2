package dev.delayedtasks.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.internal.actuate.QueueSnapshots;
import dev.delayedtasks.internal.actuate.ReportedQueues;
import dev.delayedtasks.internal.recurring.RecurringSnapshot;
import dev.delayedtasks.internal.store.QueueStats;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of this instance's delayed-task machinery, from the background snapshot only (no
 * Redis call, no scan). UP when its handlers run and every queue it handles has a timer
 * owner, or one will be found within the timer TTL. DOWN when a handler that should run
 * has stopped, or a handled queue has had no timer owner for longer than that in
 * successive snapshots (an old snapshot alone never makes it DOWN). A backlog is never
 * DOWN, and Redis reachability is left to Spring Boot's own {@code redis} indicator, so a
 * Redis blip does not restart every pod. Queues whose keys cannot be read (a key of the
 * wrong type, a denied command) are listed, not DOWN. A paused queue is UP and shows
 * {@code paused: true}. The details list the queues of the snapshot only (every queue
 * handled here, then up to {@code delayed-tasks.monitoring.max-queues} others, see
 * {@link ReportedQueues}), and count the known queues and those left out. Recurring
 * schedules that found ticks missed recently are listed under
 * {@code recurringMissingTicks}, not DOWN, among those the recurring snapshot reads (the
 * declared ones, then up to {@code delayed-tasks.monitoring.max-schedules}), with the
 * count of all and of those left out.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class DelayedTasksHealthIndicator extends AbstractHealthIndicator {

	private final QueueSnapshots snapshots;

	private final @Nullable DelayedTaskHandlerRegistry registry;

	private final Duration ownerlessTolerance;

	private final Map<String, Instant> ownerlessSince = new ConcurrentHashMap<>();

	private final @Nullable RecurringSnapshot recurring;

	/**
	 * Create the indicator.
	 * @param snapshots the queue snapshots
	 * @param registry this instance's handlers, or {@code null} on a producer-only
	 * instance
	 * @param ownerlessTolerance how long a handled queue may go without a timer owner (a
	 * takeover in progress)
	 */
	public DelayedTasksHealthIndicator(QueueSnapshots snapshots, @Nullable DelayedTaskHandlerRegistry registry,
			Duration ownerlessTolerance) {
		this(snapshots, registry, ownerlessTolerance, null);
	}

	/**
	 * Create the indicator, with the recurring schedules.
	 * @param snapshots the queue snapshots
	 * @param registry this instance's handlers, or {@code null} on a producer-only
	 * instance
	 * @param ownerlessTolerance how long a handled queue may go without a timer owner (a
	 * takeover in progress)
	 * @param recurring the recurring schedules' snapshot, or {@code null}
	 */
	public DelayedTasksHealthIndicator(QueueSnapshots snapshots, @Nullable DelayedTaskHandlerRegistry registry,
			Duration ownerlessTolerance, @Nullable RecurringSnapshot recurring) {
		super("delayed-tasks health check failed");
		this.snapshots = snapshots;
		this.registry = registry;
		this.ownerlessTolerance = ownerlessTolerance;
		this.recurring = recurring;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Map<String, QueueStats> snapshot = this.snapshots.current();
		List<HandlerContainer> handlers = (this.registry != null) ? List.copyOf(this.registry.getHandlers())
				: List.of();
		boolean up = true;
		Map<String, Object> queues = new LinkedHashMap<>();
		List<String> readyWithoutHandler = new ArrayList<>();
		// Ownerless time is measured between snapshots: a snapshot older than the
		// tolerance (a long snapshot interval, or Redis out of reach) proves nothing.
		Instant refreshedAt = this.snapshots.refreshedAt();
		Instant now = (refreshedAt != null) ? refreshedAt : Instant.now();
		Set<String> checked = new HashSet<>();
		Map<String, String> unreadableQueues = this.snapshots.unreadable();
		for (QueueStats stats : snapshot.values()) {
			Map<String, Object> details = new LinkedHashMap<>();
			details.put("ready", stats.ready());
			details.put("dead", stats.dead());
			details.put("oldestReadyAge", stats.oldestReadyAge().toString());
			details.put("timerOwner", (stats.timerOwner() != null) ? stats.timerOwner() : "none");
			// Paused is UP: an operator's choice, not a fault; shown so a growing backlog
			// is explained.
			details.put("paused", stats.paused());
			// Flow control is UP too: a held-back queue's backlog is the limits at work.
			if (stats.limits().limited()) {
				details.put("limits", stats.limits().toString());
				details.put("leased", stats.active());
				if (stats.limits().rateLimit() != null) {
					details.put("startsInRateWindow", stats.startsInRateWindow());
				}
			}
			if (stats.heldUntilMs() > 0) {
				details.put("heldUntil", Instant.ofEpochMilli(stats.heldUntilMs()).toString());
			}
			HandlerContainer handler = handlers.stream()
				.filter((container) -> container.queue().equals(stats.queue()))
				.findFirst()
				.orElse(null);
			if (handler != null) {
				details.put("handler", handler.id());
				details.put("running", handler.isRunning());
				if (handler.isRunning()) {
					checked.add(stats.queue());
					if (ownerlessTooLong(stats, now)) {
						details.put("problem", "no timer owner for over " + this.ownerlessTolerance);
						up = false;
					}
				}
			}
			String unreadable = unreadableQueues.get(stats.queue());
			if (unreadable != null) {
				// Reported, not DOWN: a cluster slot moving or failing over reads
				// the same way for a moment, and the dispatcher logs what it meets.
				details.put("unreadable",
						"its keys could not be read at the last refresh, these are older stats: " + unreadable);
			}
			if (stats.ready() > 0 && stats.timerOwner() == null && stats.active() == 0) {
				readyWithoutHandler.add(stats.queue());
			}
			queues.put(stats.queue(), details);
		}
		// A queue handled again later starts a new takeover, not an old one.
		this.ownerlessSince.keySet().retainAll(checked);
		if (this.registry != null && !this.registry.isRunning()) {
			builder.withDetail("problem", "the handler registry is not running");
			up = false;
		}
		// The snapshot holds the reported queues only (every queue handled here, then up
		// to delayed-tasks.monitoring.max-queues others): the rest are counted.
		ReportedQueues.Selection selection = this.snapshots.selection();
		builder.withDetail("queues", queues)
			.withDetail("readyWithoutHandler", readyWithoutHandler)
			.withDetail("unreadableQueues", new TreeSet<>(unreadableQueues.keySet()))
			.withDetail("knownQueues", selection.known())
			.withDetail("unreportedQueues", selection.omitted());
		if (this.snapshots.refreshedAt() != null) {
			builder.withDetail("snapshotAt", this.snapshots.refreshedAt().toString());
		}
		if (this.recurring != null) {
			// Reported, not DOWN: restarting an instance brings no missed tick back.
			builder.withDetail("recurringMissingTicks", this.recurring.missingTicks())
				.withDetail("knownRecurringSchedules", this.recurring.known())
				.withDetail("unreportedRecurringSchedules", this.recurring.unreported());
		}
		if (up) {
			builder.up();
		}
		else {
			builder.down();
		}
	}

	private boolean ownerlessTooLong(QueueStats stats, Instant now) {
		if (stats.timerOwner() != null) {
			this.ownerlessSince.remove(stats.queue());
			return false;
		}
		Instant since = this.ownerlessSince.computeIfAbsent(stats.queue(), (queue) -> now);
		return Duration.between(since, now).compareTo(this.ownerlessTolerance) > 0;
	}

}

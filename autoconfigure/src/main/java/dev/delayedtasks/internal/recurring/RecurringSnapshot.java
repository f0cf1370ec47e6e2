package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.RecurringScheduleInfo;
import org.jspecify.annotations.Nullable;

/**
 * The recurring schedules as last read from Redis in the background, so the health
 * indicator never calls Redis: which schedules exist and which are missing ticks.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public final class RecurringSnapshot {

	private final Duration missingWindow;

	private volatile List<RecurringScheduleInfo> schedules = List.of();

	private volatile @Nullable Instant refreshedAt;

	/**
	 * Create an empty snapshot.
	 * @param missingWindow how recently a schedule must have missed a tick to count as
	 * missing ticks
	 */
	public RecurringSnapshot(Duration missingWindow) {
		this.missingWindow = missingWindow;
	}

	/**
	 * Replace the snapshot.
	 * @param schedules the schedules just read
	 */
	void update(List<RecurringScheduleInfo> schedules) {
		this.schedules = List.copyOf(schedules);
		this.refreshedAt = Instant.now();
	}

	/**
	 * The schedules.
	 * @return the schedules of the last refresh
	 */
	public List<RecurringScheduleInfo> schedules() {
		return this.schedules;
	}

	/**
	 * When the snapshot was last refreshed.
	 * @return the time, or {@code null} before the first refresh
	 */
	public @Nullable Instant refreshedAt() {
		return this.refreshedAt;
	}

	/**
	 * The schedules that found ticks missed recently (not paused).
	 * @return their ids
	 */
	public List<String> missingTicks() {
		Instant refreshed = this.refreshedAt;
		List<String> missing = new ArrayList<>();
		if (refreshed == null) {
			return missing;
		}
		Instant since = refreshed.minus(this.missingWindow);
		for (RecurringScheduleInfo schedule : this.schedules) {
			Instant lastMissed = schedule.lastMissedAt();
			if (!schedule.paused() && lastMissed != null && lastMissed.isAfter(since)) {
				missing.add(schedule.id());
			}
		}
		return missing;
	}

}

package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import dev.delayedtasks.RecurringScheduleInfo;
import org.jspecify.annotations.Nullable;

/**
 * The recurring schedules as last read from Redis in the background, so the health
 * indicator never calls Redis: which schedules exist and which are missing ticks. It
 * holds at most {@code delayed-tasks.monitoring.max-schedules} of them (those this
 * application declares always), and counts the others.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public final class RecurringSnapshot {

	private final Duration missingWindow;

	private volatile Reading reading = new Reading(List.of(), 0, List.of(), null);

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
	 * @param known how many schedules there are, read or not
	 * @param redisTime the time of Redis for a queue: a missed tick's time is Redis's, so
	 * "recently" is measured on that clock, not this instance's
	 */
	void update(List<RecurringScheduleInfo> schedules, long known, Function<String, Instant> redisTime) {
		List<String> missing = new ArrayList<>();
		for (RecurringScheduleInfo schedule : schedules) {
			Instant lastMissed = schedule.lastMissedAt();
			if (!schedule.paused() && lastMissed != null
					&& lastMissed.isAfter(redisTime.apply(schedule.queue()).minus(this.missingWindow))) {
				missing.add(schedule.id());
			}
		}
		this.reading = new Reading(List.copyOf(schedules), known, List.copyOf(missing), Instant.now());
	}

	/**
	 * The schedules.
	 * @return the schedules of the last refresh
	 */
	public List<RecurringScheduleInfo> schedules() {
		return this.reading.schedules;
	}

	/**
	 * How many schedules there were at the last refresh, those left out included.
	 * @return the count
	 */
	public long known() {
		return this.reading.known;
	}

	/**
	 * How many schedules the last refresh left out (beyond the limit, or unreadable).
	 * @return the count
	 */
	public long unreported() {
		Reading current = this.reading;
		return Math.max(0, current.known - current.schedules.size());
	}

	/**
	 * When the snapshot was last refreshed.
	 * @return the time, or {@code null} before the first refresh
	 */
	public @Nullable Instant refreshedAt() {
		return this.reading.refreshedAt;
	}

	/**
	 * The schedules that found ticks missed recently (not paused), by Redis's time at the
	 * last refresh.
	 * @return their ids
	 */
	public List<String> missingTicks() {
		return this.reading.missing;
	}

	private record Reading(List<RecurringScheduleInfo> schedules, long known, List<String> missing,
			@Nullable Instant refreshedAt) {
	}

}

package dev.delayedtasks;

import java.time.Instant;
import java.time.ZoneId;

import org.jspecify.annotations.Nullable;

/**
 * A recurring schedule as stored in Redis, with where it stands.
 *
 * @param id the schedule id
 * @param queue the queue its occurrences go to
 * @param expression the cron expression, or the rate as {@code every PT5M}
 * @param zone the zone the cron expression is read in
 * @param misfire the misfire policy
 * @param overlap the overlap policy
 * @param origin who declared it: {@code annotation}, {@code properties} or {@code api}
 * @param paused whether it is paused
 * @param nextTick the earliest tick whose occurrence has not started, or {@code null}
 * when the expression has no further tick
 * @param lastTick the tick of the last occurrence that started, or {@code null}
 * @param lastOutcome how that occurrence ended ({@code succeeded}, {@code failed},
 * {@code skipped-overlap}, ...), or {@code null} while it runs or when none ran
 * @param occurrences occurrences created so far
 * @param missedTicks ticks missed so far (see {@link MisfirePolicy})
 * @param lastMissedAt when a tick was last found missed, or {@code null}
 * @author delayed-tasks
 * @since 0.2.0
 */
public record RecurringScheduleInfo(String id, String queue, String expression, ZoneId zone, MisfirePolicy misfire,
		OverlapPolicy overlap, String origin, boolean paused, @Nullable Instant nextTick, @Nullable Instant lastTick,
		@Nullable String lastOutcome, long occurrences, long missedTicks, @Nullable Instant lastMissedAt) {

}

package dev.delayedtasks.actuate;

import java.util.List;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringSchedulePage;
import dev.delayedtasks.RecurringTasks;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code recurringtasks} Actuator endpoint: the recurring schedules, a page at a time
 * ({@code ?after=<id>&limit=<n>}, at most {@code delayed-tasks.monitoring.max-schedules}
 * per page), each with its expression, zone, next and last tick, last outcome, missed
 * ticks and whether it is paused. Read-only by default, like {@code delayedtasks}; with
 * {@code management.endpoint.recurringtasks.access=unrestricted} it can also pause and
 * resume a schedule, or trigger it now ({@code POST /actuator/recurringtasks/<id>} with
 * {@code {"action":"pause"}}, {@code resume} or {@code trigger}). Reads come from Redis
 * directly. An unknown schedule answers {@code null} (404 over HTTP); an invalid id or
 * action answers 400.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
@Endpoint(id = "recurringtasks", defaultAccess = Access.READ_ONLY)
public class RecurringTasksEndpoint {

	private final RecurringTasks recurring;

	private final int maxSchedules;

	/**
	 * Create the endpoint.
	 * @param recurring the schedules
	 * @param maxSchedules the most schedules on one page
	 */
	public RecurringTasksEndpoint(RecurringTasks recurring, int maxSchedules) {
		this.recurring = recurring;
		this.maxSchedules = maxSchedules;
	}

	/**
	 * One page of the schedules, by id.
	 * @param after the {@code next} of the previous page, or {@code null} for the first
	 * @param limit the most schedules on the page, or {@code null} for the most there may
	 * be ({@code delayed-tasks.monitoring.max-schedules}, which also caps a larger limit)
	 * @return the page
	 */
	@ReadOperation
	public SchedulesDescriptor schedules(@Nullable String after, @Nullable Integer limit) {
		if (limit != null && limit < 1) {
			throw new InvalidEndpointRequestException("Invalid limit " + limit, "limit must be at least 1");
		}
		int size = (limit != null) ? Math.min(limit, this.maxSchedules) : this.maxSchedules;
		RecurringSchedulePage page = this.recurring.list((after != null) ? checkId(after) : null, size);
		return new SchedulesDescriptor(page.schedules(), page.next(), page.total());
	}

	/**
	 * One schedule.
	 * @param id the schedule id
	 * @return the schedule, or {@code null} when unknown
	 */
	@ReadOperation
	public @Nullable RecurringScheduleInfo schedule(@Selector String id) {
		return this.recurring.find(checkId(id)).orElse(null);
	}

	/**
	 * Pause, resume or trigger a schedule ({@code trigger} runs it once now, outside its
	 * ticks: see {@link RecurringTasks#trigger(String)}; refused while it is paused).
	 * @param id the schedule id
	 * @param action {@code pause}, {@code resume} or {@code trigger}
	 * @return the schedule after the action, or {@code null} when unknown
	 */
	@WriteOperation
	public @Nullable RecurringScheduleInfo scheduleAction(@Selector String id, String action) {
		checkId(id);
		boolean found = switch (action) {
			case "pause" -> this.recurring.pause(id);
			case "resume" -> this.recurring.resume(id);
			case "trigger" -> trigger(id);
			default -> throw new InvalidEndpointRequestException(
					"Unknown action '" + action + "' for a schedule: use pause, resume or trigger",
					"Unknown action '" + action + "': use pause, resume or trigger");
		};
		return found ? this.recurring.find(id).orElse(null) : null;
	}

	private boolean trigger(String id) {
		try {
			return this.recurring.trigger(id).isPresent();
		}
		catch (IllegalStateException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
	}

	private static String checkId(String id) {
		try {
			return RecurringSchedule.checkId(id);
		}
		catch (InvalidTaskRequestException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
		}
	}

	/**
	 * One page of the schedules.
	 *
	 * @param schedules the page's schedules, by id
	 * @param next the {@code after} of the next page, or {@code null} on the last page
	 * @param total how many schedules there are
	 */
	public record SchedulesDescriptor(List<RecurringScheduleInfo> schedules, @Nullable String next,
			long total) implements OperationResponseBody {

	}

}

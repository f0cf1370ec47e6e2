package dev.delayedtasks.actuate;

import dev.delayedtasks.RecurringScheduleInfo;

import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * Web extension of the {@link RecurringTasksEndpoint}: an action on an unknown schedule
 * answers 404, not 204.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
@EndpointWebExtension(endpoint = RecurringTasksEndpoint.class)
public class RecurringTasksEndpointWebExtension {

	private final RecurringTasksEndpoint endpoint;

	/**
	 * Create the extension.
	 * @param endpoint the endpoint
	 */
	public RecurringTasksEndpointWebExtension(RecurringTasksEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * Pause or resume a schedule, 404 when it is unknown.
	 * @param id the schedule id
	 * @param action {@code pause} or {@code resume}
	 * @return the response
	 */
	@WriteOperation
	public WebEndpointResponse<RecurringScheduleInfo> scheduleAction(@Selector String id, String action) {
		RecurringScheduleInfo result = this.endpoint.scheduleAction(id, action);
		return (result != null) ? new WebEndpointResponse<>(result)
				: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
	}

}

package dev.delayedtasks.actuate;

import dev.delayedtasks.actuate.DelayedTasksEndpoint.ActionDescriptor;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * Over HTTP, a write operation on an unknown queue or task answers 404 instead of an
 * empty 204.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@EndpointWebExtension(endpoint = DelayedTasksEndpoint.class)
public class DelayedTasksEndpointWebExtension {

	private final DelayedTasksEndpoint endpoint;

	/**
	 * Create the extension.
	 * @param endpoint the endpoint
	 */
	public DelayedTasksEndpointWebExtension(DelayedTasksEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * Act on a queue, 404 when it is unknown.
	 * @param queue the queue
	 * @param action {@code pause}, {@code resume} or {@code redrive}
	 * @return the response
	 */
	@WriteOperation
	public WebEndpointResponse<ActionDescriptor> queueAction(@Selector String queue, String action) {
		return respond(this.endpoint.queueAction(queue, action));
	}

	/**
	 * Act on a task, 404 when it is unknown or not in a state the action applies to.
	 * @param queue the queue
	 * @param taskId the task's id
	 * @param action {@code redrive} or {@code cancel}
	 * @return the response
	 */
	@WriteOperation
	public WebEndpointResponse<ActionDescriptor> taskAction(@Selector String queue, @Selector String taskId,
			String action) {
		return respond(this.endpoint.taskAction(queue, taskId, action));
	}

	/**
	 * Purge a queue's dead letters, 404 when it is unknown.
	 * @param queue the queue
	 * @return the response
	 */
	@DeleteOperation
	public WebEndpointResponse<ActionDescriptor> purge(@Selector String queue) {
		return respond(this.endpoint.purge(queue));
	}

	private static WebEndpointResponse<ActionDescriptor> respond(@Nullable ActionDescriptor result) {
		return (result != null) ? new WebEndpointResponse<>(result)
				: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
	}

}

package dev.delayedtasks.actuate;

import dev.delayedtasks.QueueRemoval;
import dev.delayedtasks.actuate.DelayedTasksEndpoint.ActionDescriptor;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * Over HTTP, a write operation on an unknown queue or task answers 404 instead of an
 * empty 204, and a refused removal of a queue answers 409 with the reason and the queue's
 * counts.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@EndpointWebExtension(endpoint = DelayedTasksEndpoint.class)
public class DelayedTasksEndpointWebExtension {

	private static final int STATUS_CONFLICT = 409;

	private final DelayedTasksEndpoint endpoint;

	/**
	 * Create the extension.
	 * @param endpoint the endpoint
	 */
	public DelayedTasksEndpointWebExtension(DelayedTasksEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * Act on a queue, 404 when it is unknown, 409 when it cannot be removed.
	 * @param queue the queue
	 * @param action {@code pause}, {@code resume}, {@code redrive}, {@code remove} or
	 * {@code limits}
	 * @param rateLimit with {@code limits}: {@code count/window}, {@code none}, or
	 * {@code null} to keep it
	 * @param globalConcurrency with {@code limits}: 0 for none, or {@code null} to keep
	 * it
	 * @param keyRateLimit with {@code limits}: {@code count/window}, {@code none}, or
	 * {@code null} to keep it
	 * @return the response
	 */
	@WriteOperation
	public WebEndpointResponse<? extends OperationResponseBody> queueAction(@Selector String queue, String action,
			@Nullable String rateLimit, @Nullable Integer globalConcurrency, @Nullable String keyRateLimit) {
		if ("remove".equals(action)) {
			QueueRemoval removal = this.endpoint.remove(queue);
			if (removal == null) {
				return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
			}
			if (!removal.removed()) {
				return new WebEndpointResponse<>(RefusalDescriptor.of(removal), STATUS_CONFLICT);
			}
			return new WebEndpointResponse<>(new ActionDescriptor(queue, null, action, 1));
		}
		return respond(this.endpoint.queueAction(queue, action, rateLimit, globalConcurrency, keyRateLimit));
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

	/**
	 * A refused write operation.
	 *
	 * @param queue the queue
	 * @param action the action
	 * @param reason why it was refused: {@code NOT_EMPTY}, {@code HANDLED_HERE},
	 * {@code HANDLED_ELSEWHERE} or {@code IN_USE}
	 * @param message what happened and what to do
	 * @param scheduled the queue's scheduled tasks
	 * @param ready its ready tasks
	 * @param active its active tasks
	 * @param dead its dead letters
	 */
	public record RefusalDescriptor(String queue, String action, String reason, String message, long scheduled,
			long ready, long active, long dead) implements OperationResponseBody {

		static RefusalDescriptor of(QueueRemoval removal) {
			return new RefusalDescriptor(removal.queue(), "remove", removal.outcome().name(), removal.message(),
					removal.scheduled(), removal.ready(), removal.active(), removal.dead());
		}

	}

}

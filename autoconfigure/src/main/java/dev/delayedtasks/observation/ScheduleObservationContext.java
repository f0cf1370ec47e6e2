package dev.delayedtasks.observation;

import java.util.LinkedHashMap;
import java.util.Map;

import io.micrometer.observation.transport.SenderContext;

/**
 * The observation context of scheduling tasks on a queue. A sender context whose carrier
 * is a header map: a tracing handler writes the trace context into it, and the scheduler
 * sends those headers with every task.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class ScheduleObservationContext extends SenderContext<Map<String, String>> {

	private final String queue;

	private final int tasks;

	/**
	 * Create a context.
	 * @param queue the queue (of the first task, for batches across queues)
	 * @param tasks how many tasks are scheduled
	 */
	public ScheduleObservationContext(String queue, int tasks) {
		super((carrier, key, value) -> {
			if (carrier != null) {
				carrier.put(key, value);
			}
		});
		setCarrier(new LinkedHashMap<>());
		setRemoteServiceName("redis");
		this.queue = queue;
		this.tasks = tasks;
	}

	/**
	 * The queue.
	 * @return the queue
	 */
	public String getQueue() {
		return this.queue;
	}

	/**
	 * How many tasks the call schedules.
	 * @return the count
	 */
	public int getTasks() {
		return this.tasks;
	}

	/**
	 * The headers the tracing handler wrote: the trace context to send with the tasks.
	 * @return the headers
	 */
	public Map<String, String> propagatedHeaders() {
		Map<String, String> carrier = getCarrier();
		return (carrier != null) ? carrier : Map.of();
	}

}

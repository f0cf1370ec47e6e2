package dev.delayedtasks.actuate;

import java.util.function.IntSupplier;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The gauge {@code delayed.tasks.producer.buffered}: tasks that this instance's
 * asynchronous API accepted and has not stored in Redis yet. Near zero while Redis
 * answers; while it is unreachable and the outage buffer is enabled, the tasks held in
 * memory, which are lost if the process stops.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class ProducerBufferMetrics implements MeterBinder {

	private final IntSupplier bufferedTasks;

	/**
	 * Create the binder.
	 * @param bufferedTasks reads the count
	 */
	public ProducerBufferMetrics(IntSupplier bufferedTasks) {
		this.bufferedTasks = bufferedTasks;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		Gauge.builder("delayed.tasks.producer.buffered", this.bufferedTasks, IntSupplier::getAsInt)
			.description("Tasks accepted by the asynchronous API of this instance and not yet stored in Redis")
			.baseUnit("tasks")
			.register(registry);
	}

}

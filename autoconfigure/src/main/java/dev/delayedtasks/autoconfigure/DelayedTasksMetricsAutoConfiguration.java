package dev.delayedtasks.autoconfigure;

import java.util.function.Function;

import dev.delayedtasks.actuate.DelayedTaskMetrics;
import dev.delayedtasks.actuate.ProducerBufferMetrics;
import dev.delayedtasks.actuate.RecurringMetrics;
import dev.delayedtasks.internal.actuate.BoundedQueueTags;
import dev.delayedtasks.internal.actuate.QueueSnapshots;
import dev.delayedtasks.internal.producer.RedisDelayedTaskScheduler;
import dev.delayedtasks.internal.worker.HandlerEndpoint;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer metrics of delayed tasks, when Micrometer and a {@link MeterRegistry} are
 * present.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@AutoConfiguration(after = DelayedTasksAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ MeterRegistry.class, QueueSnapshots.class })
public final class DelayedTasksMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	DelayedTaskMetrics delayedTaskMetrics(QueueSnapshots snapshots, ObjectProvider<DelayedTaskHandlerRegistry> handlers,
			BoundedQueueTags queueTags) {
		Function<String, String> handlerOfQueue = (queue) -> {
			DelayedTaskHandlerRegistry registry = handlers.getIfAvailable();
			return (registry != null) ? registry.getEndpointForQueue(queue).map(HandlerEndpoint::id).orElse("none")
					: "none";
		};
		return new DelayedTaskMetrics(snapshots, handlerOfQueue, queueTags);
	}

	/**
	 * Bounds the {@code queue} tag of every {@code delayed.tasks.*} meter, those the
	 * observations create included. A meter filter, so Spring Boot applies it to every
	 * registry; it depends on nothing but the properties, because registries are made
	 * before the Redis connection (whose observations need them).
	 * @param properties the properties
	 * @return the filter
	 */
	@Bean
	@ConditionalOnMissingBean
	BoundedQueueTags delayedTasksQueueTags(DelayedTasksProperties properties) {
		return new BoundedQueueTags(properties.monitoring().maxQueues());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RedisDelayedTaskScheduler.class)
	ProducerBufferMetrics delayedTasksProducerBufferMetrics(RedisDelayedTaskScheduler scheduler) {
		return new ProducerBufferMetrics(scheduler::bufferedTasks);
	}

	@Bean
	@ConditionalOnMissingBean
	RecurringMetrics delayedTasksRecurringMetrics(MeterRegistry registry) {
		return new RecurringMetrics(registry);
	}

}

package dev.delayedtasks.autoconfigure;

import java.util.function.Function;

import dev.delayedtasks.actuate.DelayedTaskMetrics;
import dev.delayedtasks.actuate.QueueSnapshots;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerEndpoint;
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
	DelayedTaskMetrics delayedTaskMetrics(QueueSnapshots snapshots,
			ObjectProvider<DelayedTaskHandlerRegistry> handlers) {
		Function<String, String> handlerOfQueue = (queue) -> {
			DelayedTaskHandlerRegistry registry = handlers.getIfAvailable();
			return (registry != null) ? registry.getEndpointForQueue(queue).map(HandlerEndpoint::id).orElse("none")
					: "none";
		};
		return new DelayedTaskMetrics(snapshots, handlerOfQueue);
	}

}

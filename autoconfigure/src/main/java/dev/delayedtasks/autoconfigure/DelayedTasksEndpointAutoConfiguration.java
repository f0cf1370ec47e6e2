package dev.delayedtasks.autoconfigure;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.actuate.DelayedTasksEndpoint;
import dev.delayedtasks.actuate.DelayedTasksEndpointWebExtension;
import dev.delayedtasks.internal.actuate.ReportedQueues;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code delayedtasks} Actuator endpoint, when Actuator is present and the endpoint
 * is available.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@AutoConfiguration(after = DelayedTasksAutoConfiguration.class)
@ConditionalOnClass(ConditionalOnAvailableEndpoint.class)
@ConditionalOnBean(RedisQueueStats.class)
@ConditionalOnAvailableEndpoint(DelayedTasksEndpoint.class)
public final class DelayedTasksEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	DelayedTasksEndpoint delayedTasksEndpoint(RedisQueueStats stats, QueueIndex index, DelayedTaskScheduler scheduler,
			DeadLetters deadLetters, QueueControl control, ObjectProvider<DelayedTaskHandlerRegistry> registry,
			DelayedTasksProperties properties) {
		DelayedTaskHandlerRegistry handlers = registry.getIfAvailable();
		ReportedQueues reported = new ReportedQueues(properties.monitoring().maxQueues(), properties.queues().keySet(),
				ReportedQueues.handledBy(() -> handlers));
		return new DelayedTasksEndpoint(stats, index, scheduler, deadLetters, control, handlers, reported);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(DelayedTasksEndpoint.class)
	DelayedTasksEndpointWebExtension delayedTasksEndpointWebExtension(DelayedTasksEndpoint endpoint) {
		return new DelayedTasksEndpointWebExtension(endpoint);
	}

}

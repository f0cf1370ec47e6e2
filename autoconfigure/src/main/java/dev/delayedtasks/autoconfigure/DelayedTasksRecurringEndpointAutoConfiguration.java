package dev.delayedtasks.autoconfigure;

import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.actuate.RecurringTasksEndpoint;
import dev.delayedtasks.actuate.RecurringTasksEndpointWebExtension;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code recurringtasks} Actuator endpoint, when Actuator is present and the endpoint
 * is available.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
@AutoConfiguration(after = DelayedTasksAutoConfiguration.class)
@ConditionalOnClass(ConditionalOnAvailableEndpoint.class)
@ConditionalOnBean(RecurringTasks.class)
@ConditionalOnAvailableEndpoint(RecurringTasksEndpoint.class)
public final class DelayedTasksRecurringEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RecurringTasksEndpoint recurringTasksEndpoint(RecurringTasks recurring, DelayedTasksProperties properties) {
		return new RecurringTasksEndpoint(recurring, properties.monitoring().maxSchedules());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RecurringTasksEndpoint.class)
	RecurringTasksEndpointWebExtension recurringTasksEndpointWebExtension(RecurringTasksEndpoint endpoint) {
		return new RecurringTasksEndpointWebExtension(endpoint);
	}

}

package dev.delayedtasks.autoconfigure;

import dev.delayedtasks.actuate.DelayedTasksHealthIndicator;
import dev.delayedtasks.internal.actuate.QueueSnapshots;
import dev.delayedtasks.internal.recurring.RecurringSnapshot;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code delayedTasks} health indicator, when Spring Boot's health support is
 * present.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@AutoConfiguration(after = DelayedTasksAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(QueueSnapshots.class)
@ConditionalOnEnabledHealthIndicator("delayedtasks")
public final class DelayedTasksHealthContributorAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "delayedTasksHealthIndicator")
	DelayedTasksHealthIndicator delayedTasksHealthIndicator(QueueSnapshots snapshots,
			ObjectProvider<DelayedTaskHandlerRegistry> registry, DelayedTasksProperties properties,
			ObjectProvider<RecurringSnapshot> recurring) {
		return new DelayedTasksHealthIndicator(snapshots, registry.getIfAvailable(),
				properties.worker().timerTtl().multipliedBy(3), recurring.getIfAvailable());
	}

}

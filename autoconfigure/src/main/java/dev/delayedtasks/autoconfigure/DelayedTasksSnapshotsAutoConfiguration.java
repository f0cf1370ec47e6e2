package dev.delayedtasks.autoconfigure;

import dev.delayedtasks.internal.actuate.CorruptDataReporter;
import dev.delayedtasks.internal.actuate.QueueSnapshots;
import dev.delayedtasks.internal.actuate.ReportedQueues;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * The background {@link QueueSnapshots} that the health indicator and the metrics gauges
 * read, created only when one of them is there: without them nothing would read the
 * snapshots, and refreshing them would only load Redis.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@AutoConfiguration(after = DelayedTasksAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration" },
		before = { DelayedTasksHealthContributorAutoConfiguration.class, DelayedTasksMetricsAutoConfiguration.class })
@ConditionalOnBean(RedisQueueStats.class)
@Conditional(DelayedTasksSnapshotsAutoConfiguration.HealthOrMetrics.class)
public final class DelayedTasksSnapshotsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	QueueSnapshots delayedTasksQueueSnapshots(RedisQueueStats stats, QueueIndex index,
			ObjectProvider<DelayedTaskHandlerRegistry> handlers, DelayedTasksProperties properties) {
		ReportedQueues reported = new ReportedQueues(properties.monitoring().maxQueues(), properties.queues().keySet(),
				ReportedQueues.handledBy(handlers::getIfAvailable));
		QueueSnapshots snapshots = new QueueSnapshots(stats, index, reported, properties.snapshotInterval());
		snapshots.onRefresh(new CorruptDataReporter());
		return snapshots;
	}

	/**
	 * The health indicator is enabled, or a meter registry is present.
	 */
	static final class HealthOrMetrics extends AnyNestedCondition {

		HealthOrMetrics() {
			super(ConfigurationPhase.REGISTER_BEAN);
		}

		@ConditionalOnClass(name = { "org.springframework.boot.health.contributor.HealthIndicator",
				"org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator" })
		@ConditionalOnEnabledHealthIndicator("delayedtasks")
		static final class Health {

		}

		@ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
		@ConditionalOnBean(type = "io.micrometer.core.instrument.MeterRegistry")
		static final class Metrics {

		}

	}

}

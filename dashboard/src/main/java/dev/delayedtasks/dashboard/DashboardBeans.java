package dev.delayedtasks.dashboard;

import java.time.Clock;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.actuate.DelayedTasksEndpoint;
import dev.delayedtasks.autoconfigure.DelayedTasksProperties;
import dev.delayedtasks.internal.actuate.ReportedQueues;
import dev.delayedtasks.internal.admin.RedisDeadLetters;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisQueueBrowser;
import dev.delayedtasks.internal.store.RedisQueueHistory;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The dashboard's reads and API, whatever the web stack, imported only by the
 * configuration that decided who may use the dashboard.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
@Configuration(proxyBeanMethods = false)
class DashboardBeans {

	// The endpoint's operations, whether or not Actuator exposes the endpoint: the
	// dashboard reads and acts as the endpoint does, with its own access rules. Held in
	// a record so that Actuator does not take it for a second endpoint.
	@Bean
	DashboardEndpoint delayedTasksDashboardEndpoint(RedisQueueStats stats, QueueIndex index,
			DelayedTaskScheduler scheduler, RedisDeadLetters deadLetters, QueueControl control,
			ObjectProvider<DelayedTaskHandlerRegistry> registry, DelayedTasksProperties delayedTasks) {
		DelayedTaskHandlerRegistry handlers = registry.getIfAvailable();
		ReportedQueues reported = new ReportedQueues(delayedTasks.monitoring().maxQueues(),
				delayedTasks.queues().keySet(), ReportedQueues.handledBy(() -> handlers));
		return new DashboardEndpoint(
				new DelayedTasksEndpoint(stats, index, scheduler, deadLetters, control, handlers, reported));
	}

	@Bean
	@ConditionalOnMissingBean
	DashboardReads delayedTasksDashboardReads(DashboardEndpoint endpoint, RedisDeadLetters deadLetters,
			RedisQueueBrowser browser, StoreScripts scripts, StoreSettings settings, DashboardProperties properties) {
		return new DashboardReads(endpoint.operations(), browser, deadLetters, new RedisQueueHistory(scripts, settings),
				properties.refreshInterval(), Clock.systemUTC());
	}

	@Bean
	@ConditionalOnMissingBean
	DashboardTasks delayedTasksDashboardTasks(DashboardEndpoint endpoint, RedisQueueBrowser browser,
			RedisDeadLetters deadLetters, RedisInstanceRegistry instances, PayloadCodec codec) {
		return new DashboardTasks(endpoint.operations(), browser, deadLetters, instances, codec);
	}

	@Bean
	@ConditionalOnMissingBean
	DashboardSchedules delayedTasksDashboardSchedules(RecurringTasks recurring, DelayedTasksProperties delayedTasks) {
		return new DashboardSchedules(recurring, delayedTasks.monitoring().maxSchedules());
	}

	@Bean
	@ConditionalOnMissingBean
	DashboardApi delayedTasksDashboardApi(DashboardEndpoint endpoint, DashboardReads reads, DashboardTasks tasks,
			DashboardSchedules schedules, RedisInstanceRegistry instances, RedisDeadLetters deadLetters,
			RecurringTasks recurring, DelayedTaskScheduler scheduler, DashboardProperties properties,
			ObjectProvider<JsonMapper> jsonMapper) {
		DashboardActions actions = new DashboardActions(endpoint.operations(), deadLetters, recurring, scheduler, reads,
				tasks);
		return new DashboardApi(reads, tasks, schedules, instances, actions, properties,
				jsonMapper.getIfAvailable(JsonMapper::shared));
	}

	/**
	 * The operations of the {@code delayedtasks} endpoint the dashboard reads and acts
	 * through.
	 *
	 * @param operations the endpoint's operations
	 */
	record DashboardEndpoint(DelayedTasksEndpoint operations) {

	}

}

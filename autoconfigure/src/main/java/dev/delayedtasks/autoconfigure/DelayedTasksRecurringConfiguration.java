package dev.delayedtasks.autoconfigure;

import java.time.Clock;

import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.internal.annotation.RecurringAnnotationBeanPostProcessor;
import dev.delayedtasks.internal.recurring.RecurringDeclarations;
import dev.delayedtasks.internal.recurring.RecurringEvents;
import dev.delayedtasks.internal.recurring.RecurringScheduleRegistrar;
import dev.delayedtasks.internal.recurring.RecurringSnapshot;
import dev.delayedtasks.internal.recurring.RedisRecurringTasks;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Recurring schedules: the {@link RecurringTasks} API (also the gate that applies a
 * schedule's policies before its occurrences run), the discovery of {@code @Recurring}
 * methods, and the registration of declared schedules at startup, before the handlers
 * start. Imported by {@link DelayedTasksAutoConfiguration}.
 *
 * @author delayed-tasks
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(DelayedTasksRecurringProperties.class)
class DelayedTasksRecurringConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RecurringAnnotationBeanPostProcessor delayedTasksRecurringAnnotationBeanPostProcessor() {
		return new RecurringAnnotationBeanPostProcessor();
	}

	@Bean
	@ConditionalOnMissingBean
	RecurringDeclarations delayedTasksRecurringDeclarations() {
		return new RecurringDeclarations();
	}

	@Bean
	@ConditionalOnMissingBean(RecurringTasks.class)
	RedisRecurringTasks delayedTasksRecurringTasks(StoreScripts scripts, StoreSettings settings, PayloadCodec codec,
			QueueIndex queues, RedisConnectionFactory connectionFactory, DelayedTasksProperties properties,
			ObjectProvider<RecurringEvents> events, ObjectProvider<Clock> clock) {
		// The same max attempts as the queue's other tasks, whichever instance creates
		// an occurrence.
		return new RedisRecurringTasks(scripts, settings, codec, queues, new StringRedisTemplate(connectionFactory),
				(queue) -> properties.retry(queue).maxRetries() + 1, events.getIfUnique(() -> RecurringEvents.NONE),
				clock.getIfUnique(Clock::systemUTC));
	}

	@Bean
	@ConditionalOnMissingBean
	RecurringSnapshot delayedTasksRecurringSnapshot() {
		// Missing ticks: missed within the last two repair passes.
		return new RecurringSnapshot(RecurringScheduleRegistrar.REPAIR_INTERVAL.multipliedBy(2));
	}

	@Bean
	@ConditionalOnBean(RedisRecurringTasks.class)
	RecurringScheduleRegistrar delayedTasksRecurringScheduleRegistrar(RedisRecurringTasks recurring,
			RecurringDeclarations declarations, DelayedTasksRecurringProperties properties, RecurringSnapshot snapshot,
			DelayedTasksProperties delayedTasks) {
		// Before the handlers: an occurrence is never run before its schedule is
		// upserted.
		return new RecurringScheduleRegistrar(recurring, declarations, properties.declared(), properties.disabled(),
				DelayedTaskHandlerRegistry.PHASE - 1, snapshot, delayedTasks.snapshotInterval(),
				delayedTasks.monitoring().maxSchedules());
	}

}

package dev.delayedtasks.internal.testing;

import java.util.Collection;
import java.util.List;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.recurring.RecurringScheduleRegistrar;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.script.ScriptClock;
import dev.delayedtasks.testing.DelayedTasksTester;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Test auto-configuration behind {@code @AutoConfigureDelayedTasks}: the
 * {@link DelayedTasksTester}, the run history it reads (a listener of every task), and
 * the deletion of the context's keys when it closes.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@AutoConfiguration(after = DelayedTasksAutoConfiguration.class)
@ConditionalOnBean(StoreSettings.class)
public final class DelayedTasksTesterAutoConfiguration {

	/**
	 * Loads the application's scripts on the test clock, which
	 * {@link DelayedTasksTester#advanceTime} moves; an application outside tests runs on
	 * Redis time alone.
	 * @return the clock
	 */
	@Bean
	ScriptClock delayedTasksTestScriptClock() {
		return ScriptClock.TEST;
	}

	@Bean
	@ConditionalOnMissingBean
	RunHistory delayedTasksTestRunHistory() {
		return new RunHistory();
	}

	@Bean(destroyMethod = "deleteAll")
	PrefixKeys delayedTasksTestKeys(RedisConnectionFactory connectionFactory, StoreSettings settings) {
		// Destroyed after the workers have stopped (they are lifecycle beans), before the
		// connection factory it depends on.
		return new PrefixKeys(connectionFactory, settings.keyPrefix());
	}

	@Bean
	@ConditionalOnMissingBean
	DelayedTasksTester delayedTasksTester(RedisConnectionFactory connectionFactory, StoreSettings settings,
			QueueControl control, DeadLetters deadLetters, DelayedTaskScheduler scheduler, RunHistory history,
			ObjectProvider<DelayedTaskHandlerRegistry> registry, ObjectProvider<RecurringScheduleRegistrar> recurring) {
		return new DelayedTasksTester(connectionFactory, settings.keyPrefix(), control, deadLetters, scheduler, history,
				() -> handlerQueues(registry.getIfAvailable()),
				() -> recurring.ifAvailable(RecurringScheduleRegistrar::restoreDeclared));
	}

	private static Collection<String> handlerQueues(DelayedTaskHandlerRegistry registry) {
		return (registry != null) ? registry.getHandlers().stream().map(HandlerContainer::queue).toList() : List.of();
	}

}

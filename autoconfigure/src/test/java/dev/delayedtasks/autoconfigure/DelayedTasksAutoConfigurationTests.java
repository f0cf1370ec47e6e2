package dev.delayedtasks.autoconfigure;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.internal.store.TaskStore;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * When the auto-configuration backs off: none of these contexts connects to Redis, so
 * they need none (the port below is never opened).
 */
class DelayedTasksAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
				DelayedTasksAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.url=redis://127.0.0.1:1");

	@Test
	void runWhenDisabledShouldNotProvideAnything() {
		this.runner.withPropertyValues("delayed-tasks.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(DelayedTaskScheduler.class)
				.doesNotHaveBean(TaskStore.class));
	}

	@Test
	void runWithoutSpringDataRedisShouldNotProvideAnything() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DelayedTasksAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(StringRedisTemplate.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DelayedTaskScheduler.class));
	}

	@Test
	void runWithTwoConnectionFactoriesShouldNotGuess() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DelayedTasksAutoConfiguration.class))
			.withBean("one", RedisConnectionFactory.class, () -> mock(RedisConnectionFactory.class))
			.withBean("another", RedisConnectionFactory.class, () -> mock(RedisConnectionFactory.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DelayedTaskScheduler.class));
	}

}

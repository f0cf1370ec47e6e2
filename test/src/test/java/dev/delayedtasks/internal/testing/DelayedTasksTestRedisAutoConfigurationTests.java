package dev.delayedtasks.internal.testing;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When the test Redis auto-configuration steps aside. Neither case starts a Redis.
 */
class DelayedTasksTestRedisAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DelayedTasksTestRedisAutoConfiguration.class));

	@Test
	void connectionDetailsOfTheTestItselfWinAsAServiceConnectionsDo() {
		this.runner.withUserConfiguration(ServiceConnection.class).run((context) -> {
			assertThat(context).hasSingleBean(DataRedisConnectionDetails.class)
				.doesNotHaveBean(TestRedisConnectionDetails.class);
			assertThat(context.getBean(DataRedisConnectionDetails.class).getStandalone().getHost())
				.isEqualTo("redis.from.container");
		});
	}

	@Test
	void provideRedisFalseKeepsTheApplicationsConnection() {
		this.runner.withPropertyValues("delayed-tasks.test.provide-redis=false")
			.run((context) -> assertThat(context).doesNotHaveBean(DataRedisConnectionDetails.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class ServiceConnection {

		@Bean
		DataRedisConnectionDetails containerConnectionDetails() {
			return new DataRedisConnectionDetails() {

				@Override
				public Standalone getStandalone() {
					return Standalone.of("redis.from.container", 32768);
				}

			};
		}

	}

}

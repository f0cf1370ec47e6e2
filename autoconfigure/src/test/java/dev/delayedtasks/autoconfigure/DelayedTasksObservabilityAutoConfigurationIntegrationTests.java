package dev.delayedtasks.autoconfigure;

import java.time.Duration;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.actuate.DelayedTaskMetrics;
import dev.delayedtasks.actuate.DelayedTasksEndpoint;
import dev.delayedtasks.actuate.DelayedTasksEndpointWebExtension;
import dev.delayedtasks.actuate.DelayedTasksHealthIndicator;
import dev.delayedtasks.internal.actuate.QueueSnapshots;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.health.registry.HealthContributorRegistry;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The metrics, health and endpoint auto-configurations: each present when its classes and
 * beans are, absent without its classes (the scheduler still working), off by its switch,
 * and backing off from a bean of the application's own.
 */
@WithRedis
class DelayedTasksObservabilityAutoConfigurationIntegrationTests {

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	DelayedTasksObservabilityAutoConfigurationIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = new ApplicationContextRunner()
			.withInitializer(DelayedTasksObservabilityAutoConfigurationIntegrationTests::lenientConversion)
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksSnapshotsAutoConfiguration.class,
					MetricsAutoConfiguration.class, DelayedTasksMetricsAutoConfiguration.class,
					HealthContributorRegistryAutoConfiguration.class,
					DelayedTasksHealthContributorAutoConfiguration.class, DelayedTasksEndpointAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.snapshot-interval=200ms",
					"management.endpoints.web.exposure.include=delayedtasks");
	}

	// Metrics

	@Test
	void metricsArePresentWithMicrometerAndAMeterRegistryAndCountWhatIsScheduled() {
		this.runner.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			assertThat(context).hasSingleBean(DelayedTaskMetrics.class);
			assertThat(context.getBeansOfType(DelayedTaskListener.class).values())
				.contains(context.getBean(DelayedTaskMetrics.class));
			context.getBean(DelayedTaskScheduler.class).schedule("ac-metrics", "x", Duration.ofMinutes(5));
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("delayed.tasks.scheduled")
				.tags("queue", "ac-metrics", "outcome", "created")
				.counter()
				.count()).isEqualTo(1);
		});
	}

	@Test
	void metricsAreAbsentWithoutMicrometerAndTheSchedulerStillWorks() {
		this.runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
			.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(DelayedTaskMetrics.class);
				assertSchedulerWorks(context, "ac-no-micrometer");
			});
	}

	@Test
	void metricsAreAbsentWithoutAMeterRegistryBean() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(MeterRegistry.class);
			assertThat(context).doesNotHaveBean(DelayedTaskMetrics.class);
			assertSchedulerWorks(context, "ac-no-registry");
		});
	}

	@Test
	void metricsBackOffFromTheApplicationsOwnMetricsBean() {
		this.runner.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
			.withUserConfiguration(OwnMetrics.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(DelayedTaskMetrics.class);
				assertThat(context.getBean(DelayedTaskMetrics.class)).isSameAs(context.getBean("ownMetrics"));
			});
	}

	// Health

	@Test
	void healthIndicatorIsPresentWithSpringBootHealthAndNamedDelayedTasks() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(DelayedTasksHealthIndicator.class);
			assertThat(context).hasBean("delayedTasksHealthIndicator");
			DelayedTasksHealthIndicator indicator = context.getBean(DelayedTasksHealthIndicator.class);
			assertThat(context.getBean(HealthContributorRegistry.class).getContributor("delayedTasks"))
				.isSameAs(indicator);
			Health health = indicator.health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsKeys("queues", "readyWithoutHandler");
		});
	}

	@Test
	void healthIndicatorIsAbsentWithoutSpringBootHealthAndTheSchedulerStillWorks() {
		// As an application finds the auto-configurations: through the import filter
		// and the generated metadata, with no class of spring-boot-health at all.
		importedRunner().withClassLoader(new FilteredClassLoader("org.springframework.boot.health")).run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(DelayedTasksHealthIndicator.class);
			assertThat(context).hasSingleBean(DelayedTasksEndpoint.class);
			assertSchedulerWorks(context, "ac-no-health");
		});
	}

	@Test
	void healthIndicatorIsAbsentWhenOnlyTheHealthIndicatorTypeIsMissing() {
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class)).run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(DelayedTasksHealthIndicator.class);
			assertSchedulerWorks(context, "ac-no-health-indicator");
		});
	}

	@Test
	void healthIndicatorIsOffWhenDisabledByItsProperty() {
		this.runner.withPropertyValues("management.health.delayedtasks.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DelayedTasksHealthIndicator.class));
	}

	@Test
	void healthIndicatorIsOffWhenHealthIndicatorsAreDisabledByDefault() {
		this.runner.withPropertyValues("management.health.defaults.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DelayedTasksHealthIndicator.class));
	}

	@Test
	void healthIndicatorBacksOffFromTheApplicationsOwnIndicatorOfTheSameName() {
		this.runner.withUserConfiguration(OwnHealthIndicator.class).run((context) -> {
			assertThat(context).hasSingleBean(DelayedTasksHealthIndicator.class);
			assertThat(context.getBean(DelayedTasksHealthIndicator.class))
				.isSameAs(context.getBean(OwnHealthIndicator.class).indicator);
		});
	}

	// Endpoint

	@Test
	void endpointAndItsWebExtensionArePresentWhenActuatorIsAndTheEndpointIsExposed() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(DelayedTasksEndpoint.class)
				.hasSingleBean(DelayedTasksEndpointWebExtension.class);
			TaskId id = context.getBean(DelayedTaskScheduler.class).schedule("ac-endpoint", "x", Duration.ofMinutes(5));
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			assertThat(endpoint.queues().queues()).anySatisfy((queue) -> {
				assertThat(queue.name()).isEqualTo("ac-endpoint");
				assertThat(queue.scheduled()).isEqualTo(1);
			});
			assertThat(endpoint.task("ac-endpoint", id.value())).isNotNull();
		});
	}

	@Test
	void endpointIsAbsentWithoutActuatorAndTheSchedulerStillWorks() {
		this.runner.withClassLoader(new FilteredClassLoader(ConditionalOnAvailableEndpoint.class)).run((context) -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(DelayedTasksEndpoint.class)
				.doesNotHaveBean(DelayedTasksEndpointWebExtension.class);
			assertSchedulerWorks(context, "ac-no-actuator");
		});
	}

	@Test
	void endpointIsAbsentWithoutAnyActuatorClassesAndTheSchedulerStillWorks() {
		importedRunner().withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate")).run((context) -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(DelayedTasksEndpoint.class)
				.doesNotHaveBean(DelayedTasksEndpointWebExtension.class);
			assertThat(context).hasSingleBean(DelayedTasksHealthIndicator.class);
			assertSchedulerWorks(context, "ac-no-actuate");
		});
	}

	@Test
	void everyObservabilityAutoConfigurationIsSkippedWithoutMicrometerHealthAndActuator() {
		importedRunner()
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate",
					"org.springframework.boot.health", "io.micrometer.core"))
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean(DelayedTaskMetrics.class)
					.doesNotHaveBean(DelayedTasksHealthIndicator.class)
					.doesNotHaveBean(DelayedTasksEndpoint.class)
					.doesNotHaveBean(QueueSnapshots.class);
				assertSchedulerWorks(context, "ac-nothing-observable");
			});
	}

	@Test
	void endpointIsAbsentWhenNotExposed() {
		new ApplicationContextRunner()
			.withInitializer(DelayedTasksObservabilityAutoConfigurationIntegrationTests::lenientConversion)
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksEndpointAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + this.redis.url(),
					"delayed-tasks.key-prefix=" + this.redis.keyPrefix(), "delayed-tasks.worker.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(DelayedTaskScheduler.class)
				.doesNotHaveBean(DelayedTasksEndpoint.class));
	}

	@Test
	void endpointIsAbsentWhenExcludedFromExposure() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=*",
					"management.endpoints.web.exposure.exclude=delayedtasks")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(DelayedTasksEndpoint.class)
				.doesNotHaveBean(DelayedTasksEndpointWebExtension.class));
	}

	@Test
	void endpointIsAbsentWhenNoAccessIsGrantedByDefault() {
		this.runner.withPropertyValues("management.endpoints.access.default=none")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DelayedTasksEndpoint.class));
	}

	@Test
	void endpointIsAbsentWhenItsOwnAccessIsNone() {
		this.runner.withPropertyValues("management.endpoint.delayedtasks.access=none")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DelayedTasksEndpoint.class));
	}

	@Test
	void endpointBacksOffFromTheApplicationsOwnEndpointAndTheWebExtensionWrapsIt() {
		this.runner.withUserConfiguration(OwnEndpoint.class).run((context) -> {
			assertThat(context).hasSingleBean(DelayedTasksEndpoint.class)
				.hasSingleBean(DelayedTasksEndpointWebExtension.class);
			assertThat(context.getBean(DelayedTasksEndpoint.class)).isSameAs(context.getBean("ownEndpoint"));
		});
	}

	@Test
	void endpointWorksOnAProducerOnlyInstance() {
		this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			assertThat(context).hasSingleBean(DelayedTasksEndpoint.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduler.enqueue("ac-producer-only", "x");
			DelayedTasksEndpoint endpoint = context.getBean(DelayedTasksEndpoint.class);
			assertThat(endpoint.queueAction("ac-producer-only", "pause", null, null, null)).isNotNull();
			assertThat(endpoint.queue("ac-producer-only")).satisfies((queue) -> {
				assertThat(queue.queue().paused()).isTrue();
				assertThat(queue.queue().handlers()).isEmpty();
			});
			assertThat(context.getBean(DelayedTasksHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
		});
	}

	private ApplicationContextRunner importedRunner() {
		return new ApplicationContextRunner()
			.withInitializer(DelayedTasksObservabilityAutoConfigurationIntegrationTests::lenientConversion)
			.withUserConfiguration(ImportedAutoConfigurations.class)
			.withPropertyValues("spring.data.redis.url=" + this.redis.url(),
					"delayed-tasks.key-prefix=" + this.redis.keyPrefix(), "delayed-tasks.worker.enabled=false",
					"management.endpoints.web.exposure.include=delayedtasks");
	}

	/**
	 * Bind enums leniently ({@code none} for {@code NONE}) as an application started by
	 * {@code SpringApplication} does.
	 */
	private static void lenientConversion(ConfigurableApplicationContext context) {
		context.getEnvironment().setConversionService(new ApplicationConversionService());
	}

	private static void assertSchedulerWorks(AssertableApplicationContext context, String queue) {
		DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
		TaskId id = scheduler.schedule(queue, "still works", Duration.ofMinutes(5));
		assertThat(scheduler.find(queue, id)).isPresent();
		assertThat(scheduler.cancel(queue, id)).isTrue();
	}

	/**
	 * The auto-configurations imported the way an application imports them, through the
	 * import filter and the generated metadata.
	 */
	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
			DelayedTasksAutoConfiguration.class, DelayedTasksSnapshotsAutoConfiguration.class,
			DelayedTasksMetricsAutoConfiguration.class, DelayedTasksHealthContributorAutoConfiguration.class,
			DelayedTasksEndpointAutoConfiguration.class })
	static class ImportedAutoConfigurations {

		@Bean
		SimpleMeterRegistry simpleMeterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnMetrics {

		@Bean
		DelayedTaskMetrics ownMetrics(QueueSnapshots snapshots) {
			return new DelayedTaskMetrics(snapshots, (queue) -> "mine");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnHealthIndicator {

		DelayedTasksHealthIndicator indicator;

		@Bean
		DelayedTasksHealthIndicator delayedTasksHealthIndicator(QueueSnapshots snapshots) {
			this.indicator = new DelayedTasksHealthIndicator(snapshots, null, Duration.ofMinutes(1));
			return this.indicator;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnEndpoint {

		@Bean
		DelayedTasksEndpoint ownEndpoint(RedisQueueStats stats, QueueIndex index, DelayedTaskScheduler scheduler,
				DeadLetters deadLetters, QueueControl control) {
			return new DelayedTasksEndpoint(stats, index, scheduler, deadLetters, control, null);
		}

	}

}

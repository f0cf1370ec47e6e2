package dev.delayedtasks.autoconfigure;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Every {@code delayed-tasks.*} value is checked at startup, while it is bound, and a
 * wrong one fails startup with a message naming the property, the value and the rule,
 * whether the handler post-processor or the properties bean binds it first. No Redis is
 * needed: the failure comes before any connection.
 */
@ExtendWith(OutputCaptureExtension.class)
class DelayedTasksPropertiesValidationTests {

	// Nothing listens there: a context that started by mistake cannot touch a real Redis.
	private static final String NO_REDIS = "spring.data.redis.url=redis://127.0.0.1:1";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
				DelayedTasksAutoConfiguration.class))
		.withPropertyValues(NO_REDIS);

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|',
			textBlock = """
					worker.concurrency=-1          | worker.concurrency is -1: it must be at least 1
					worker.concurrency=0           | worker.concurrency is 0: it must be at least 1
					worker.lease-duration=0s       | worker.lease-duration is 0s: it must be at least 3ms (heartbeats extend leases every third of it, in whole milliseconds)
					worker.lease-duration=2ms      | worker.lease-duration is 2ms: it must be at least 3ms (heartbeats extend leases every third of it, in whole milliseconds)
					worker.reap-grace=-1s          | worker.reap-grace is -1s: it must be 0 or more
					worker.max-deliveries=0        | worker.max-deliveries is 0: it must be at least 1
					worker.shutdown-timeout=-1ms   | worker.shutdown-timeout is -1ms: it must be 0 or more
					worker.timer-ttl=0s            | worker.timer-ttl is 0s: it must be at least 100ms (the timer owner renews its lease every third of it, so a shorter TTL polls Redis in a loop)
					worker.timer-ttl=99ms          | worker.timer-ttl is 99ms: it must be at least 100ms (the timer owner renews its lease every third of it, so a shorter TTL polls Redis in a loop)
					worker.block-timeout=500us     | worker.block-timeout is 500us: it must be at least 1ms (BLPOP would round a shorter wait to 0, which blocks for ever)
					worker.block-timeout=0s        | worker.block-timeout is 0s: it must be at least 1ms (BLPOP would round a shorter wait to 0, which blocks for ever)
					worker.max-claim=0             | worker.max-claim is 0: it must be at least 1
					producer.max-payload-size=0B   | producer.max-payload-size is 0B: it must be more than 0B
					producer.batch-size=0          | producer.batch-size is 0: it must be at least 1
					producer.batch-bytes=0B        | producer.batch-bytes is 0B: it must be more than 0B
					producer.max-headers=-1        | producer.max-headers is -1: it must be at least 0
					producer.max-headers-size=0B   | producer.max-headers-size is 0B: it must be more than 0B
					producer.outage-buffer.max-tasks=0 | producer.outage-buffer.max-tasks is 0: it must be at least 1
					producer.outage-buffer.max-wait=0s | producer.outage-buffer.max-wait is 0s: it must be more than 0
					snapshot-interval=0s           | snapshot-interval is 0s: it must be at least 1ms (it is a period in whole milliseconds)
					retry.max-retries=-1           | retry.max-retries is -1: it must be between 0 and 2147483646 (a task runs at most max-retries + 1 times)
					retry.max-retries=2147483647   | retry.max-retries is 2147483647: it must be between 0 and 2147483646 (a task runs at most max-retries + 1 times)
					retry.delay=-1s                | retry.delay is -1s: it must be 0 or more
					retry.multiplier=0.5           | retry.multiplier is 0.5: it must be a finite number of at least 1
					retry.max-delay=0s             | retry.max-delay is 0s: it must be more than 0
					retry.delay=10m                | retry.max-delay is 5m: it must be at least delayed-tasks.retry.delay (10m)
					retry.jitter=-1ms              | retry.jitter is -1ms: it must be 0 or more
					dead-letter.retention=0s       | dead-letter.retention is 0s: it must be at least 1ms (0 would keep dead letters for ever)
					dead-letter.max-count=0        | dead-letter.max-count is 0: it must be at least 1 (0 would keep any number of dead letters)
					results.retention=-1s          | results.retention is -1s: it must be 0 or more
					results.tracked-retention=0s   | results.tracked-retention is 0s: it must be more than 0
					results.max-size=0B            | results.max-size is 0B: it must be more than 0B
					queues.emails.results.retention=-1ms | queues.emails.results.retention is -1ms: it must be 0 or more
					queues.emails.concurrency=0    | queues.emails.concurrency is 0: it must be at least 1
					queues.emails.concurrency=-1   | queues.emails.concurrency is -1: it must be at least 1
					queues[orders.v2].concurrency=0 | queues[orders.v2].concurrency is 0: it must be at least 1
					queues.emails.timeout=0s       | queues.emails.timeout is 0s: it must be more than 0
					queues.emails.retry.max-retries=-1 | queues.emails.retry.max-retries is -1: it must be between 0 and 2147483646 (a task runs at most max-retries + 1 times)
					queues.emails.retry.delay=-1s  | queues.emails.retry.delay is -1s: it must be 0 or more
					queues.emails.retry.multiplier=0.9 | queues.emails.retry.multiplier is 0.9: it must be a finite number of at least 1
					queues.emails.retry.max-delay=0s | queues.emails.retry.max-delay is 0s: it must be more than 0
					queues.emails.retry.jitter=-1ms | queues.emails.retry.jitter is -1ms: it must be 0 or more
					queues.emails.retry.delay=10m  | retry.max-delay is 5m: it must be at least delayed-tasks.queues.emails.retry.delay (10m)
					queues.emails.retry.max-delay=500ms | queues.emails.retry.max-delay is 500ms: it must be at least delayed-tasks.retry.delay (1s)
					retry.exception-includes=java.lang.String | retry.exception-includes contains java.lang.String: it must list exception types (java.lang.Throwable or a subclass)
					retry.exception-excludes=java.lang.Object | retry.exception-excludes contains java.lang.Object: it must list exception types (java.lang.Throwable or a subclass)
					retry.exception-includes=dev.delayedtasks.NonRetryableTaskException | retry.exception-includes contains dev.delayedtasks.NonRetryableTaskException: NonRetryableTaskException is never retried
					queues.emails.retry.exception-includes=java.lang.String | queues.emails.retry.exception-includes contains java.lang.String: it must list exception types (java.lang.Throwable or a subclass)
					queues.emails.retry.exception-excludes=java.lang.Thread | queues.emails.retry.exception-excludes contains java.lang.Thread: it must list exception types (java.lang.Throwable or a subclass)
					queues.emails.retry.exception-includes=dev.delayedtasks.NonRetryableTaskException | queues.emails.retry.exception-includes contains dev.delayedtasks.NonRetryableTaskException: NonRetryableTaskException is never retried
					key-prefix=a b                 | key-prefix is invalid: Key prefix 'a b' is invalid: character ' ' at index 1 is not allowed; use 1-64 letters, digits, '.', '-', '_', ':'
					scripts.load-library=true      | scripts.load-library is true, but delayed-tasks.scripts.mode is eval: the function library is only used with mode functions
					queues[a b].concurrency=2      | queues has overrides for an invalid queue name: Queue name 'a b' is invalid: character ' ' at index 1 is not allowed; use 1-64 letters, digits, '.', '-', '_'
					""")
	void invalidValueFailsStartupNamingThePropertyNotTheHandler(String property, String message) {
		this.runner.withPropertyValues("delayed-tasks." + property)
			.withUserConfiguration(EmailHandler.class)
			.run((context) -> {
				assertFailedOnBinding(context, "delayed-tasks." + message);
				// Not blamed on the handler whose defaults come from these properties.
				assertThat(causes(context.getStartupFailure()))
					.noneMatch((cause) -> String.valueOf(cause.getMessage()).contains("emailHandler"));
			});
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|',
			textBlock = """
					worker.concurrency=0           | worker.concurrency is 0: it must be at least 1
					worker.timer-ttl=0s            | worker.timer-ttl is 0s: it must be at least 100ms (the timer owner renews its lease every third of it, so a shorter TTL polls Redis in a loop)
					retry.max-retries=-1           | retry.max-retries is -1: it must be between 0 and 2147483646 (a task runs at most max-retries + 1 times)
					queues.emails.concurrency=0    | queues.emails.concurrency is 0: it must be at least 1
					dead-letter.max-count=-1       | dead-letter.max-count is -1: it must be at least 1 (0 would keep any number of dead letters)
					""")
	void invalidValueFailsStartupOfAProducerOnlyApplication(String property, String message) {
		this.runner.withPropertyValues("delayed-tasks.worker.enabled=false", "delayed-tasks." + property)
			.run((context) -> assertFailedOnBinding(context, "delayed-tasks." + message));
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|',
			textBlock = """
					retry.exception-includes=java.lang.IllegalStateException;retry.exception-excludes=java.lang.RuntimeException | retry.exception-includes contains java.lang.IllegalStateException: delayed-tasks.retry.exception-excludes contains its supertype java.lang.RuntimeException, and an excluded type is never retried
					retry.exception-includes=java.io.IOException;retry.exception-excludes=java.io.IOException | retry.exception-includes contains java.io.IOException: delayed-tasks.retry.exception-excludes contains it too, and an excluded type is never retried
					queues.emails.retry.exception-includes=java.lang.IllegalStateException;retry.exception-excludes=java.lang.RuntimeException | queues.emails.retry.exception-includes contains java.lang.IllegalStateException: delayed-tasks.retry.exception-excludes contains its supertype java.lang.RuntimeException, and an excluded type is never retried
					retry.exception-includes=java.lang.IllegalStateException;queues.emails.retry.exception-excludes=java.lang.IllegalStateException | retry.exception-includes contains java.lang.IllegalStateException: delayed-tasks.queues.emails.retry.exception-excludes contains it too, and an excluded type is never retried
					""")
	void anIncludedTypeThatIsAlsoExcludedFailsStartupNamingWhereEachIsSet(String properties, String message) {
		this.runner.withPropertyValues(properties.replaceAll("(^|;)", "$1delayed-tasks.").split(";"))
			.run((context) -> assertFailedOnBinding(context, "delayed-tasks." + message));
	}

	@Test
	void anExceptionTypeThatIsNoClassFailsStartupNamingTheProperty() {
		this.runner
			.withPropertyValues("delayed-tasks.queues.emails.retry.exception-excludes=com.example.NoSuchException")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(causes(context.getStartupFailure())).hasAtLeastOneElementOfType(BindException.class)
					.anySatisfy((cause) -> assertThat(cause)
						.hasMessageContaining("delayed-tasks.queues.emails.retry.exception-excludes"));
			});
	}

	@Test
	void exceptionIncludesAndExcludesBindGloballyAndPerQueueAndAnEmptyQueueListClearsTheGlobalOne() {
		new ApplicationContextRunner().withUserConfiguration(PropertiesOnly.class)
			.withPropertyValues("delayed-tasks.retry.exception-excludes=java.lang.IllegalArgumentException",
					"delayed-tasks.queues.emails.retry.exception-includes=java.io.IOException,java.util.concurrent.TimeoutException",
					"delayed-tasks.queues.reports.retry.exception-excludes=")
			.run((context) -> {
				DelayedTasksProperties properties = context.getBean(DelayedTasksProperties.class);
				assertThat(properties.retry().exceptionIncludes()).isEmpty();
				assertThat(properties.retry().exceptionExcludes()).containsExactly(IllegalArgumentException.class);
				assertThat(properties.retry("emails").exceptionIncludes()).containsExactly(IOException.class,
						TimeoutException.class);
				assertThat(properties.retry("emails").exceptionExcludes())
					.containsExactly(IllegalArgumentException.class);
				assertThat(properties.retry("reports").exceptionExcludes()).isEmpty();
				assertThat(properties.retry("other").exceptionExcludes())
					.containsExactly(IllegalArgumentException.class);
			});
	}

	@Test
	void invalidValueIsReportedByBootAsABindingFailureWithTheRuleAsTheReason(CapturedOutput output) {
		SpringApplication application = new SpringApplication(Application.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(() -> application.run("--spring.main.banner-mode=off", "--" + NO_REDIS,
				"--delayed-tasks.worker.concurrency=0"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Failed to bind properties under 'delayed-tasks'")
			.contains("Reason: java.lang.IllegalArgumentException: delayed-tasks.worker.concurrency is 0: "
					+ "it must be at least 1")
			.contains("Update your application's configuration");
	}

	@ParameterizedTest
	@ValueSource(strings = { "worker.concurrency=1", "worker.lease-duration=3ms", "worker.reap-grace=0s",
			"worker.max-deliveries=1", "worker.shutdown-timeout=0s", "worker.timer-ttl=100ms",
			"worker.block-timeout=1ms", "worker.max-claim=1", "producer.max-payload-size=1B", "producer.batch-size=1",
			"producer.batch-bytes=1B", "producer.max-headers=0", "producer.max-headers-size=1B",
			"snapshot-interval=1ms", "retry.max-retries=0", "retry.max-retries=2147483646", "retry.delay=0s",
			"retry.multiplier=1", "retry.max-delay=1s", "retry.jitter=0s", "dead-letter.retention=1ms",
			"dead-letter.max-count=1", "queues.emails.concurrency=1", "queues.emails.timeout=1ms",
			"queues.emails.retry.max-retries=0", "queues.emails.retry.delay=5m", "queues.emails.retry.max-delay=1s",
			"queues.emails.retry.delay=10m;queues.emails.retry.max-delay=10m", "queues[orders.v2].concurrency=2",
			"key-prefix=a.b-c_d:e",
			"retry.exception-includes=java.io.IOException;retry.exception-excludes=java.io.FileNotFoundException",
			"retry.exception-excludes=java.lang.RuntimeException;queues.emails.retry.exception-excludes=;queues.emails.retry.exception-includes=java.lang.IllegalStateException",
			"queues.emails.retry.exception-includes=java.lang.Throwable" })
	void smallestValidValuesStart(String properties) {
		new ApplicationContextRunner().withUserConfiguration(PropertiesOnly.class)
			.withPropertyValues(properties.replaceAll("(^|;)", "$1delayed-tasks.").split(";"))
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(DelayedTasksProperties.class));
	}

	@Test
	void defaultsAreValid() {
		new ApplicationContextRunner().withUserConfiguration(PropertiesOnly.class).run((context) -> {
			DelayedTasksProperties properties = context.getBean(DelayedTasksProperties.class);
			assertThat(properties.worker().concurrency()).isEqualTo(1);
			assertThat(properties.worker().timerTtl()).isEqualTo(Duration.ofSeconds(3));
			assertThat(properties.producer().maxPayloadSize()).isEqualTo(DataSize.ofKilobytes(64));
			assertThat(properties.producer().maxHeaders()).isEqualTo(64);
			assertThat(properties.producer().maxHeadersSize()).isEqualTo(DataSize.ofKilobytes(16));
			assertThat(properties.producer().batchBytes()).isEqualTo(DataSize.ofMegabytes(1));
			assertThat(properties.includePayloadInErrors()).isFalse();
			assertThat(properties.deadLetter().maxCount()).isEqualTo(100_000);
		});
	}

	@Test
	void queueOverridesKeepTheirValuesOnceChecked() {
		new ApplicationContextRunner().withUserConfiguration(PropertiesOnly.class)
			.withPropertyValues("delayed-tasks.queues.emails.concurrency=4",
					"delayed-tasks.queues.emails.retry.delay=5m", "delayed-tasks.queues.emails.retry.max-retries=0")
			.run((context) -> {
				DelayedTasksProperties properties = context.getBean(DelayedTasksProperties.class);
				assertThat(properties.concurrency("emails")).isEqualTo(4);
				assertThat(properties.retry("emails").delay()).isEqualTo(Duration.ofMinutes(5));
				assertThat(properties.retry("emails").maxRetries()).isZero();
				assertThat(properties.retry("other").maxRetries()).isEqualTo(3);
			});
	}

	@Test
	void printWritesADurationInItsLargestExactUnit() {
		assertThat(PropertyChecks.print(Duration.ZERO)).isEqualTo("0s");
		assertThat(PropertyChecks.print(Duration.ofDays(14))).isEqualTo("14d");
		assertThat(PropertyChecks.print(Duration.ofMinutes(90))).isEqualTo("90m");
		assertThat(PropertyChecks.print(Duration.ofMillis(1500))).isEqualTo("1500ms");
		assertThat(PropertyChecks.print(Duration.ofNanos(1500))).isEqualTo("1500ns");
		assertThat(PropertyChecks.print(Duration.ofMillis(-1))).isEqualTo("-1ms");
		assertThat(PropertyChecks.print(Duration.ofSeconds(Long.MAX_VALUE, 1))).startsWith("PT");
	}

	@Test
	void bindingLikeTheHandlerPostProcessorChecksToo() {
		Binder binder = new Binder(new MapConfigurationPropertySource(Map.of("delayed-tasks.retry.max-retries", "-1")));
		assertThatException().isThrownBy(() -> binder.bindOrCreate("delayed-tasks", DelayedTasksProperties.class))
			.isInstanceOf(BindException.class)
			.havingRootCause()
			.withMessage("delayed-tasks.retry.max-retries is -1: it must be between 0 and 2147483646 "
					+ "(a task runs at most max-retries + 1 times)");
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			queues.emails.global-concurrency=0   | queues.emails.global-concurrency is 0: it must be at least 1
			queues.emails.global-concurrency=-1  | queues.emails.global-concurrency is -1: it must be at least 1
			queues[orders.v2].global-concurrency=0 | queues[orders.v2].global-concurrency is 0: it must be at least 1
			""")
	void invalidGlobalConcurrencyFailsStartupNamingTheProperty(String property, String message) {
		this.runner.withPropertyValues("delayed-tasks." + property)
			.withUserConfiguration(EmailHandler.class)
			.run((context) -> {
				assertFailedOnBinding(context, "delayed-tasks." + message);
				assertThat(causes(context.getStartupFailure()))
					.noneMatch((cause) -> String.valueOf(cause.getMessage()).contains("emailHandler"));
			});
		this.runner.withPropertyValues("delayed-tasks.worker.enabled=false", "delayed-tasks." + property)
			.run((context) -> assertFailedOnBinding(context, "delayed-tasks." + message));
	}

	@ParameterizedTest(name = "{0}: {1}")
	@CsvSource(delimiter = '|', textBlock = """
			rate-limit     | 0/1s   | the count must be between 1 and 2147483647
			rate-limit     | 10/0s  | the window must be longer than 0
			rate-limit     | ten/1s | write <count>/<window>
			rate-limit     | 10/1x  | write <count>/<window>
			rate-limit     | 10     | write <count>/<window>
			key-rate-limit | 0/1s   | the count must be between 1 and 2147483647
			key-rate-limit | 10/1x  | write <count>/<window>
			""")
	void invalidRateLimitFailsStartupNamingThePropertyAndTheRule(String property, String value, String rule) {
		this.runner.withPropertyValues("delayed-tasks.queues.emails." + property + "=" + value)
			.withUserConfiguration(EmailHandler.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				Throwable failure = context.getStartupFailure();
				assertThat(causes(failure)).hasAtLeastOneElementOfType(BindException.class)
					.anySatisfy((cause) -> assertThat(cause).isInstanceOf(BindException.class)
						.hasMessageContaining("delayed-tasks.queues.emails." + property));
				assertThat(NestedExceptionUtils.getMostSpecificCause(failure))
					.isInstanceOf(IllegalArgumentException.class)
					.hasMessageContaining("'" + value + "' is not a rate limit")
					.hasMessageContaining(rule);
				assertThat(causes(failure))
					.noneMatch((cause) -> String.valueOf(cause.getMessage()).contains("emailHandler"));
			});
	}

	@Test
	void invalidRateLimitIsReportedByBootAsABindingFailureOfTheProperty(CapturedOutput output) {
		SpringApplication application = new SpringApplication(Application.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(() -> application.run("--spring.main.banner-mode=off", "--" + NO_REDIS,
				"--delayed-tasks.queues.emails.rate-limit=10/1x"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("delayed-tasks.queues.emails.rate-limit")
			.contains("'10/1x' is not a rate limit");
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			queues.emails.rate-limit=1/1ms                                            | 1/1ms  |            |
			queues.emails.rate-limit=100/s                                            | 100/1s |            |
			queues.emails.rate-limit=600/1m;queues.emails.global-concurrency=1        | 600/1m | 1          |
			queues.emails.global-concurrency=2147483647                               |       | 2147483647 |
			queues.emails.key-rate-limit=10/1s                                        |       |            | 10/1s
			""")
	void validFlowControlBindsPerQueueAndOtherQueuesHaveNone(String properties, String rateLimit,
			Integer globalConcurrency, String keyRateLimit) {
		new ApplicationContextRunner().withUserConfiguration(PropertiesOnly.class)
			.withPropertyValues(properties.replaceAll("(^|;)", "$1delayed-tasks.").split(";"))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTasksProperties bound = context.getBean(DelayedTasksProperties.class);
				assertThat(bound.limits("emails"))
					.isEqualTo(new QueueLimits((rateLimit != null) ? RateLimit.parse(rateLimit) : null,
							globalConcurrency, (keyRateLimit != null) ? RateLimit.parse(keyRateLimit) : null));
				assertThat(bound.limits("other")).isEqualTo(QueueLimits.NONE);
			});
	}

	private static void assertFailedOnBinding(AssertableApplicationContext context, String message) {
		assertThat(context).hasFailed();
		Throwable failure = context.getStartupFailure();
		// Boot's failure analyzer reports a BindException with its root cause as the
		// reason.
		assertThat(causes(failure)).hasAtLeastOneElementOfType(BindException.class);
		assertThat(NestedExceptionUtils.getMostSpecificCause(failure)).isInstanceOf(IllegalArgumentException.class)
			.hasMessage(message);
	}

	private static List<Throwable> causes(Throwable failure) {
		List<Throwable> causes = new ArrayList<>();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			causes.add(cause);
		}
		return causes;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(DelayedTasksProperties.class)
	static class PropertiesOnly {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
			DelayedTasksAutoConfiguration.class })
	static class Application {

	}

	@Configuration(proxyBeanMethods = false)
	static class EmailHandler {

		@Bean
		EmailHandlerBean emailHandler() {
			return new EmailHandlerBean();
		}

	}

	static class EmailHandlerBean {

		@DelayedTaskHandler(queue = "emails")
		void send(String email) {
		}

	}

}

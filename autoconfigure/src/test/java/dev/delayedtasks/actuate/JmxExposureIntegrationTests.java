package dev.delayedtasks.actuate;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.UUID;

import javax.management.MBeanOperationInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksEndpointAutoConfiguration;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.jmx.JmxEndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jmx.JmxAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The {@code delayedtasks} endpoint over JMX, which Spring Security does not guard: with
 * write access granted, anyone who reaches the MBean server pauses a queue without
 * logging in (the risk the security docs describe); with the read-only access they
 * recommend for JMX, the MBean has no write operation at all.
 */
@WithRedis
class JmxExposureIntegrationTests {

	private static final String QUEUE = "jmx-queue";

	private static final String[] TWO_STRINGS = { String.class.getName(), String.class.getName() };

	private final ApplicationContextRunner runner;

	private final String domain = "dt-jmx-" + UUID.randomUUID();

	JmxExposureIntegrationTests(TestRedis redis) {
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					JmxAutoConfiguration.class, EndpointAutoConfiguration.class, JmxEndpointAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksEndpointAutoConfiguration.class))
			.withPropertyValues(redis.connectionProperties())
			.withPropertyValues("delayed-tasks.key-prefix=" + redis.keyPrefix(), "delayed-tasks.worker.enabled=false",
					"spring.jmx.enabled=true", "management.endpoints.jmx.domain=" + this.domain,
					"management.endpoints.jmx.exposure.include=delayedtasks");
	}

	@Test
	void withWriteAccessAnyoneReachingTheMBeanServerPausesAQueueWithoutLoggingIn() {
		this.runner.withPropertyValues("management.endpoint.delayedtasks.access=UNRESTRICTED").run((context) -> {
			QueueControl control = context.getBean(QueueControl.class);
			context.getBean(DelayedTaskScheduler.class).schedule(QUEUE, "x", Duration.ofHours(1));
			ObjectName endpoint = endpoint();
			assertThat(operations(endpoint)).contains("queueAction", "taskAction", "purge");

			mbeanServer().invoke(endpoint, "queueAction", new Object[] { QUEUE, "pause" }, TWO_STRINGS);

			assertThat(control.isPaused(QUEUE)).as("paused over JMX, no credentials asked").isTrue();
			control.resume(QUEUE);
		});
	}

	@Test
	void withReadOnlyAccessTheMBeanHasNoWriteOperation() {
		this.runner.withPropertyValues("management.endpoint.delayedtasks.access=READ_ONLY").run((context) -> {
			ObjectName endpoint = endpoint();
			assertThat(operations(endpoint)).contains("queues", "queue", "task")
				.doesNotContain("queueAction", "taskAction", "purge");

			assertThat(catchThrowable(
					() -> mbeanServer().invoke(endpoint, "queueAction", new Object[] { QUEUE, "pause" }, TWO_STRINGS)))
				.isNotNull();
			assertThat(context.getBean(QueueControl.class).isPaused(QUEUE)).isFalse();
		});
	}

	private ObjectName endpoint() throws Exception {
		Set<ObjectName> names = mbeanServer().queryNames(new ObjectName(this.domain + ":type=Endpoint,*"), null);
		assertThat(names)
			.as("endpoint MBeans in %s among %s", this.domain,
					mbeanServer().queryNames(new ObjectName("*:type=Endpoint,*"), null))
			.singleElement();
		return names.iterator().next();
	}

	private static Set<String> operations(ObjectName name) throws Exception {
		return Set.copyOf(Arrays.stream(mbeanServer().getMBeanInfo(name).getOperations())
			.map(MBeanOperationInfo::getName)
			.toList());
	}

	private static MBeanServer mbeanServer() {
		return ManagementFactory.getPlatformMBeanServer();
	}

}

package dev.delayedtasks.internal.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksSnapshotsAutoConfiguration;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The background queue snapshot behind the gauges and the health indicator: refreshed at
 * its interval with every known queue, and stopped quietly with the application.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class QueueSnapshotsIntegrationTests {

	private final ApplicationContextRunner runner;

	QueueSnapshotsIntegrationTests(TestRedis redis) {
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksSnapshotsAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.enabled=false");
	}

	@Test
	void snapshotIsRefreshedInTheBackgroundWithEveryKnownQueue() {
		this.runner.withPropertyValues("delayed-tasks.snapshot-interval=100ms").run((context) -> {
			QueueSnapshots snapshots = context.getBean(QueueSnapshots.class);
			assertThat(snapshots.isRunning()).isTrue();
			await().atMost(Duration.ofSeconds(5)).until(() -> snapshots.refreshedAt() != null);
			Instant first = snapshots.refreshedAt();
			context.getBean(DelayedTaskScheduler.class).enqueue("snap-new", "x");
			await().atMost(Duration.ofSeconds(5))
				.until(() -> snapshots.current().containsKey("snap-new")
						&& snapshots.current().get("snap-new").ready() == 1);
			assertThat(snapshots.refreshedAt()).isAfter(first);
		});
	}

	@Test
	void notCreatedWhenNeitherHealthNorMetricsReadThem() {
		this.runner.withPropertyValues("management.health.delayedtasks.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(QueueSnapshots.class));
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(QueueSnapshots.class));
	}

	@Test
	void createdForMetricsWhenTheHealthIndicatorIsOff() {
		this.runner.withPropertyValues("management.health.delayedtasks.enabled=false")
			.withBean(SimpleMeterRegistry.class)
			.run((context) -> assertThat(context).hasSingleBean(QueueSnapshots.class));
	}

	@Test
	void stoppingWithTheApplicationLogsNoRefreshFailure(CapturedOutput output) {
		// Many queues, refreshed all the time, so that closing interrupts a refresh.
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			requests.add(TaskRequest.of("snap-stop-" + i, "x"));
		}
		for (int i = 0; i < 5; i++) {
			this.runner
				.withPropertyValues("delayed-tasks.snapshot-interval=1ms", "delayed-tasks.monitoring.max-queues=1000")
				.run((context) -> {
					context.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
					QueueSnapshots snapshots = context.getBean(QueueSnapshots.class);
					await().atMost(Duration.ofSeconds(5)).until(() -> snapshots.current().size() >= 300);
				});
		}
		assertThat(output).doesNotContain("Could not refresh the delayed-tasks queue snapshot");
	}

}

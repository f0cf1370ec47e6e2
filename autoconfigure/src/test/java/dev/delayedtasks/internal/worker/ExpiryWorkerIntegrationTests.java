package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksMetricsAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksSnapshotsAutoConfiguration;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Expiry through the running starter: tasks that expire while their queue is paused never
 * reach the handler once it resumes; the listener hears of each and the
 * {@code delayed.tasks.expired} counter counts them, while a task that has not expired
 * runs.
 */
@WithRedis
class ExpiryWorkerIntegrationTests {

	private static final String QUEUE = "exp-worker";

	private final TestRedis redis;

	ExpiryWorkerIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void tasksThatExpireWhileTheirQueueIsPausedNeverRunAndAreReported() {
		ShortLeases.runner(this.redis)
			.withConfiguration(AutoConfigurations.of(DelayedTasksSnapshotsAutoConfiguration.class,
					MetricsAutoConfiguration.class, DelayedTasksMetricsAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
			.withUserConfiguration(Handler.class)
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				QueueControl control = context.getBean(QueueControl.class);
				Handler handler = context.getBean(Handler.class);
				control.pause(QUEUE);
				TaskId stale = scheduler.schedule(TaskRequest.of(QUEUE, "stale").expireAfter(Duration.ofMillis(300)));
				TaskId alsoStale = scheduler
					.schedule(TaskRequest.of(QUEUE, "stale-too").expiresAt(Instant.now().plusMillis(300)));
				TaskId fresh = scheduler.schedule(TaskRequest.of(QUEUE, "fresh").expireAfter(Duration.ofMinutes(5)));
				Thread.sleep(500);

				control.resume(QUEUE);

				await().atMost(Duration.ofSeconds(10)).until(() -> handler.ran.contains("fresh"));
				await().atMost(Duration.ofSeconds(10)).until(() -> handler.expired.size() == 2);
				assertThat(handler.ran).containsExactly("fresh");
				assertThat(handler.expired).containsExactlyInAnyOrder(stale, alsoStale);
				assertThat(context.getBean(DeadLetters.class).list(QUEUE, 10))
					.allSatisfy((letter) -> assertThat(letter.reason()).isEqualTo(FailureReason.EXPIRED.value()))
					.hasSize(2);
				assertThat(context.getBean(MeterRegistry.class)
					.get("delayed.tasks.expired")
					.tag("queue", QUEUE)
					.counter()
					.count()).isEqualTo(2);
				assertThat(scheduler.find(QUEUE, fresh)).isEmpty();
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class Handler implements DelayedTaskListener {

		final List<String> ran = new CopyOnWriteArrayList<>();

		final List<TaskId> expired = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = QUEUE)
		void handle(String payload) {
			this.ran.add(payload);
		}

		@Override
		public void expired(String queue, TaskId id, Instant expiresAt) {
			this.expired.add(id);
		}

	}

}

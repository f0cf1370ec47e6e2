package dev.delayedtasks.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@WithRedis
class WorkerSmokeIntegrationTests {

	private final ApplicationContextRunner runner;

	WorkerSmokeIntegrationTests(TestRedis redis) {
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s")
			.withUserConfiguration(Handlers.class);
	}

	@Test
	void aDelayedTaskRunsOnceNotBeforeItsDueTime() {
		this.runner.run((context) -> {
			Handlers handlers = context.getBean(Handlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduler.schedule("greetings", new Greeting("hi"), Duration.ofMillis(300));
			await().atMost(Duration.ofSeconds(10)).until(() -> handlers.runs.size() == 1);
			Run run = handlers.runs.get(0);
			assertThat(run.greeting().text()).isEqualTo("hi");
			assertThat(run.context().startedAt()).isAfterOrEqualTo(run.context().dueAt());
			long lateness = Duration.between(run.context().dueAt(), run.context().startedAt()).toMillis();
			System.out.println("lateness_ms=" + lateness);
			Thread.sleep(500);
			assertThat(handlers.runs).hasSize(1);
		});
	}

	record Greeting(String text) {
	}

	record Run(Greeting greeting, TaskContext context, Instant at) {
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		final List<Run> runs = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = "greetings")
		void greet(Greeting greeting, TaskContext context) {
			this.runs.add(new Run(greeting, context, Instant.now()));
		}

	}

}

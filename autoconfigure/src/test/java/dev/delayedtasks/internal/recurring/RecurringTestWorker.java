package dev.delayedtasks.internal.recurring;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.worker.ParentWatchdog;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.context.annotation.Configuration;

/**
 * An application instance with recurring schedules, run in a JVM of its own by
 * {@link RecurringChild}; its schedules come from its arguments
 * ({@code --delayed-tasks.recurring.<id>.*}). It exits when its standard input closes.
 * Its handler prints, for every occurrence it runs:
 * {@code @@RAN <task id> <delivery> <due ms> <claimed ms (Redis)> <now ms>}.
 */
public final class RecurringTestWorker {

	private RecurringTestWorker() {
	}

	public static void main(String[] args) {
		ParentWatchdog.start();
		new SpringApplicationBuilder(WorkerApplication.class).web(WebApplicationType.NONE)
			.logStartupInfo(false)
			.run(args);
		System.out.println("@@READY");
		System.out.flush();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
			DelayedTasksAutoConfiguration.class })
	static class WorkerApplication {

		@DelayedTaskHandler(queue = "${recurring-test.queue}", concurrency = "4")
		void handle(JsonNode payload, TaskContext context) {
			System.out.println("@@RAN " + context.id().value() + " " + context.deliveryCount() + " "
					+ context.dueAt().toEpochMilli() + " " + context.startedAt().toEpochMilli() + " "
					+ System.currentTimeMillis());
			System.out.flush();
		}

	}

}

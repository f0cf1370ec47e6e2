package dev.delayedtasks.internal.recurring;

import java.util.concurrent.TimeUnit;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.worker.ParentWatchdog;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Value;
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
 * {@code @@RAN <task id> <delivery> <due ms> <claimed ms (Redis)> <now ms>}, then sleeps
 * {@code recurring-test.sleep-millis} (0 by default; interrupted, it throws or, with
 * {@code recurring-test.on-interrupt=return}, returns at once) and prints
 * {@code @@DONE <task id>}.
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

		@Value("${recurring-test.sleep-millis:0}")
		private long sleepMillis;

		/**
		 * What the handler does when interrupted: {@code throw} (its run fails) or
		 * {@code return} (it stops early, so a stop gives its run back).
		 */
		@Value("${recurring-test.on-interrupt:throw}")
		private String onInterrupt;

		@DelayedTaskHandler(queue = "${recurring-test.queue}", concurrency = "4")
		void handle(JsonNode payload, TaskContext context) throws InterruptedException {
			System.out.println("@@RAN " + context.id().value() + " " + context.deliveryCount() + " "
					+ context.dueAt().toEpochMilli() + " " + context.startedAt().toEpochMilli() + " "
					+ System.currentTimeMillis());
			System.out.flush();
			long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(this.sleepMillis);
			for (long left = this.sleepMillis; left > 0; left = TimeUnit.NANOSECONDS
				.toMillis(end - System.nanoTime())) {
				try {
					Thread.sleep(left);
				}
				catch (InterruptedException ex) {
					if ("return".equals(this.onInterrupt)) {
						// Stops early, as a handler that honours the interrupt does.
						Thread.currentThread().interrupt();
						return;
					}
					throw ex;
				}
			}
			System.out.println("@@DONE " + context.id().value());
			System.out.flush();
		}

	}

}

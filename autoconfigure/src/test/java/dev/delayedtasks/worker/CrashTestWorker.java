package dev.delayedtasks.worker;

import java.io.IOException;
import java.io.InputStream;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A worker application that the fault tests run in a JVM of its own ({@link ChildWorker})
 * and kill or stop. Its handler prints {@code @@STARTED <id> <delivery>} and
 * {@code @@DONE <id>} lines and sleeps as long as the job says; a completion rejected as
 * stale prints {@code @@STALE <id>}. Arguments are Spring properties
 * ({@code --spring.data.redis.url=...}). It exits when its standard input closes, so a
 * test JVM that dies never leaves it behind.
 */
public final class CrashTestWorker {

	private CrashTestWorker() {
	}

	public static void main(String[] args) {
		Thread watchdog = new Thread(() -> {
			try (InputStream in = System.in) {
				while (in.read() != -1) {
					// the parent never writes; EOF means it is gone
				}
			}
			catch (IOException ex) {
				// exit below
			}
			Runtime.getRuntime().halt(3);
		}, "parent-watchdog");
		watchdog.setDaemon(true);
		watchdog.start();
		new SpringApplicationBuilder(WorkerApplication.class).web(WebApplicationType.NONE)
			.logStartupInfo(false)
			.run(args);
		System.out.println("@@READY");
		System.out.flush();
	}

	/**
	 * A job of the fault tests: how long the child's handler sleeps (a worker in the test
	 * JVM decides for itself).
	 */
	record CrashJob(int index, long sleepMillis) {
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
			DelayedTasksAutoConfiguration.class })
	static class WorkerApplication {

		@DelayedTaskHandler(queue = "${crash.queue}", concurrency = "${crash.concurrency:4}")
		void handle(CrashJob job, TaskContext context) throws InterruptedException {
			System.out.println("@@STARTED " + context.id().value() + " " + context.deliveryCount());
			System.out.flush();
			Thread.sleep(job.sleepMillis());
			System.out.println("@@DONE " + context.id().value());
			System.out.flush();
		}

		@Bean
		DelayedTaskListener staleReporter() {
			return new DelayedTaskListener() {

				@Override
				public void staleAcknowledgement(TaskContext context) {
					System.out.println("@@STALE " + context.id().value());
					System.out.flush();
				}

			};
		}

	}

}

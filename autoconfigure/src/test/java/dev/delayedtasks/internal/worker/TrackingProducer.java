package dev.delayedtasks.internal.worker;

import java.util.concurrent.CountDownLatch;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.worker.CrashTestWorker.CrashJob;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/**
 * A producer-only application that the tracking tests run in a JVM of its own
 * ({@link ChildWorker#startMain}) and kill. It tracks {@code track.count} tasks of
 * {@code track.queue} ({@link CrashJob}s that sleep {@code track.sleep-millis}), with the
 * ids {@code <track.id-prefix>-<i>} when that property is set (so that two producers can
 * track the same tasks), and prints, the task id first:
 * <ul>
 * <li>{@code @@TRACKED <id>} once each task is stored, then {@code @@READY}</li>
 * <li>{@code @@OUTCOME <id> <kind> <runs> <result JSON>} when a task ends</li>
 * </ul>
 * It exits when its standard input closes, so a test JVM that dies never leaves it
 * behind.
 */
public final class TrackingProducer {

	private TrackingProducer() {
	}

	public static void main(String[] args) throws InterruptedException {
		ParentWatchdog.start();
		ConfigurableApplicationContext context = new SpringApplicationBuilder(ProducerApplication.class)
			.web(WebApplicationType.NONE)
			.logStartupInfo(false)
			.run(args);
		DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
		String queue = context.getEnvironment().getRequiredProperty("track.queue");
		int count = context.getEnvironment().getRequiredProperty("track.count", Integer.class);
		long sleepMillis = context.getEnvironment().getProperty("track.sleep-millis", Long.class, 0L);
		String idPrefix = context.getEnvironment().getProperty("track.id-prefix");
		for (int i = 0; i < count; i++) {
			TaskRequest request = TaskRequest.of(queue, new CrashJob(i, sleepMillis));
			TrackedTask tracked = scheduler.track((idPrefix != null) ? request.id(idPrefix + "-" + i) : request);
			print("@@TRACKED " + tracked.id().value());
			tracked.outcome()
				.thenAccept((outcome) -> print("@@OUTCOME " + outcome.id().value() + " " + outcome.kind() + " "
						+ outcome.runs() + " " + outcome.resultJson().orElse("-")));
		}
		print("@@READY");
		// Stays up, tracking, until killed or its parent is gone.
		new CountDownLatch(1).await();
	}

	private static void print(String line) {
		System.out.println(line);
		System.out.flush();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
			DelayedTasksAutoConfiguration.class })
	static class ProducerApplication {

	}

}

package dev.delayedtasks.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Component;

/**
 * Schedules a few tasks when the sample starts, so its log shows delayed execution,
 * retries, dead-lettering and flow control. Off with {@code sample.demo-tasks=false}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@ConditionalOnBooleanProperty(name = "sample.demo-tasks", matchIfMissing = true)
class DemoTasks implements ApplicationRunner {

	private static final Log logger = LogFactory.getLog(DemoTasks.class);

	private final DelayedTaskScheduler scheduler;

	DemoTasks(DelayedTaskScheduler scheduler) {
		this.scheduler = scheduler;
	}

	@Override
	public void run(ApplicationArguments args) {
		this.scheduler.schedule("reminders", new Reminder("ada", "stand up and stretch"), Duration.ofSeconds(2));
		this.scheduler.schedule("reminders", new Reminder("linus", "review the pull request"), Duration.ofSeconds(5));
		this.scheduler.schedule(TaskRequest.of("flaky", new Reminder("grace", "retry me")).maxAttempts(5));
		this.scheduler.schedule(TaskRequest.of("doomed", new Reminder("nobody", "never delivered")).maxAttempts(2));
		List<TaskRequest> calls = new ArrayList<>();
		for (int i = 1; i <= 6; i++) {
			calls.add(TaskRequest.of("partner-calls", new Reminder("acme", "sync " + i)).rateKey("acme"));
		}
		calls.add(TaskRequest.of("partner-calls", new Reminder("globex", "sync 1")).rateKey("globex"));
		calls.add(TaskRequest.of("partner-calls", new Reminder("initech", "refund now"))
			.rateKey("initech")
			.priority(TaskRequest.MAX_PRIORITY));
		this.scheduler.scheduleAll(calls);
		logger.info("Scheduled demo tasks: reminders in 2 s and 5 s, a flaky task that succeeds on its third attempt, "
				+ "a doomed one that ends in the dead letters, and partner calls under flow control");
	}

}

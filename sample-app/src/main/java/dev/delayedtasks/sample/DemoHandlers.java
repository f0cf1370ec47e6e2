package dev.delayedtasks.sample;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.annotation.Recurring;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.stereotype.Component;

/**
 * The sample's handlers: one that runs delayed reminders, a recurring digest, one that
 * fails twice before it succeeds (retries with back-off), one that always fails (dead
 * letters), and calls to a partner API under flow control (application.yml).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
public class DemoHandlers {

	private static final Log logger = LogFactory.getLog(DemoHandlers.class);

	private final List<String> events = new CopyOnWriteArrayList<>();

	@DelayedTaskHandler(queue = "reminders", concurrency = "4")
	void remind(Reminder reminder, TaskContext context) {
		long lateness = Duration.between(context.dueAt(), context.startedAt()).toMillis();
		logger.info("Reminder for " + reminder.user() + ": '" + reminder.text() + "' (due " + context.dueAt()
				+ ", started " + lateness + " ms after its due time)");
		this.events.add("reminded " + reminder.user() + " lateness_ms=" + lateness);
	}

	/**
	 * A recurring schedule: a digest every minute, Paris time, created once per tick
	 * whatever the number of instances running the sample.
	 * @param reminder the schedule's constant payload
	 * @param context the occurrence, due at its tick
	 */
	@DelayedTaskHandler(queue = "digests")
	@Recurring(id = "minute-digest", cron = "0 * * * * *", zone = "Europe/Paris",
			payload = "{\"user\":\"team\",\"text\":\"minute digest\"}", misfire = "run-once")
	void digest(Reminder reminder, TaskContext context) {
		long lateness = Duration.between(context.dueAt(), context.startedAt()).toMillis();
		logger.info("Digest for " + reminder.user() + " of tick " + context.dueAt() + " (started " + lateness
				+ " ms after it)");
		this.events.add("digest " + context.dueAt() + " lateness_ms=" + lateness);
	}

	@DelayedTaskHandler(queue = "flaky")
	void flaky(Reminder reminder, TaskContext context) {
		if (context.attempt() < 3) {
			this.events.add("flaky failed attempt " + context.attempt());
			throw new IllegalStateException("Simulated outage on attempt " + context.attempt());
		}
		logger.info("Flaky task succeeded on attempt " + context.attempt());
		this.events.add("flaky succeeded attempt " + context.attempt());
	}

	@DelayedTaskHandler(queue = "doomed")
	void doomed(Reminder reminder, TaskContext context) {
		this.events.add("doomed failed attempt " + context.attempt());
		throw new IllegalArgumentException("No mailbox for user " + reminder.user());
	}

	/**
	 * A call to a partner API that takes 5 calls a second, 2 at a time, and 2 a second
	 * per customer: the queue's flow control in application.yml keeps to that on every
	 * instance together, and an urgent call overtakes the backlog (its priority).
	 * @param call the customer and what to send
	 * @param context the run, leased at {@code startedAt} (Redis time)
	 */
	@DelayedTaskHandler(queue = "partner-calls", concurrency = "4")
	void callPartner(Reminder call, TaskContext context) {
		logger.info("Partner call for " + call.user() + ": '" + call.text() + "'");
		this.events
			.add("partner " + call.user() + " '" + call.text() + "' leased_ms=" + context.startedAt().toEpochMilli());
	}

	/**
	 * What the handlers did, in order.
	 * @return the events
	 */
	public List<String> events() {
		return List.copyOf(this.events);
	}

}

package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.dashboard.DashboardTestApplications.Handlers;
import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code POST api/task/reschedule} on a real Redis: times out of range are refused and
 * move nothing, a time in the past makes the task ready, the same id again moves only the
 * new incarnation, a task of a paused queue moves but waits for the resume, and a
 * recurring occurrence is refused (its time is its tick).
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class DashboardRescheduleIntegrationTests {

	private static final String D = DashboardTestApplications.D;

	private static ConfigurableApplicationContext context;

	private static DelayedTaskScheduler scheduler;

	@BeforeAll
	static void start(TestRedis redis) {
		context = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class },
				"--test.application-chain=deny-all");
		scheduler = context.getBean(DelayedTaskScheduler.class);
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	private static HttpResponse<String> reschedule(String queue, TaskId id, String at) throws Exception {
		return Http.as(context, DashboardTestApplications.WRITER)
			.write(D, D + "/api/task/reschedule" + Http.query("queue", queue, "id", id.value(), "at", at));
	}

	@Test
	void outOfRangeTimesAre400AndMoveNothing() throws Exception {
		TaskId id = scheduler.schedule("work", "x", Duration.ofHours(1));
		Instant due = scheduler.find("work", id).orElseThrow().dueAt();
		StringBuilder seen = new StringBuilder();
		for (String at : List.of("-1", Long.toString(Long.MAX_VALUE), Long.toString(Long.MIN_VALUE),
				"253402300800000" /* 10000-01-01 */, "1e3", "")) {
			HttpResponse<String> answer = reschedule("work", id, at);
			seen.append(at).append(" -> ").append(answer.statusCode()).append(' ').append(answer.body()).append('\n');
			assertThat(answer.statusCode()).as(seen.toString()).isEqualTo(400);
		}
		assertThat(scheduler.find("work", id).orElseThrow().dueAt()).isEqualTo(due);
	}

	@Test
	void aTimeInThePastMakesItReadyAndItRuns() throws Exception {
		TaskId id = scheduler.schedule("work", "past", Duration.ofHours(1));
		long past = Instant.now().minus(Duration.ofHours(3)).toEpochMilli();
		assertThat(reschedule("work", id, Long.toString(past)).statusCode()).isEqualTo(200);
		Handlers handlers = context.getBean(Handlers.class);
		await().atMost(Duration.ofSeconds(10)).until(() -> handlers.ran("work").contains(id));
	}

	@Test
	void theSameIdAgainOnlyMovesTheNewIncarnation() throws Exception {
		TaskId id = TaskId.of("again-1");
		scheduler.schedule(TaskRequest.of("work", "first").id(id.value()).delay(Duration.ofHours(1)));
		assertThat(scheduler.cancel("work", id)).isTrue();
		Instant at = Instant.now().plus(Duration.ofHours(7)).truncatedTo(ChronoUnit.MILLIS);
		assertThat(reschedule("work", id, Long.toString(at.toEpochMilli())).statusCode()).as("cancelled")
			.isEqualTo(404);
		assertThat(scheduler.find("work", id)).isEmpty();
		scheduler.schedule(TaskRequest.of("work", "second").id(id.value()).delay(Duration.ofHours(2)));
		assertThat(reschedule("work", id, Long.toString(at.toEpochMilli())).statusCode()).isEqualTo(200);
		assertThat(scheduler.find("work", id).orElseThrow().dueAt()).isEqualTo(at);
	}

	@Test
	void aTaskOfAPausedQueueMovesButDoesNotRunUntilResumed() throws Exception {
		QueueControl control = context.getBean(QueueControl.class);
		TaskId id = scheduler.schedule("work", "paused", Duration.ofHours(1));
		control.pause("work");
		try {
			assertThat(reschedule("work", id, Long.toString(Instant.now().toEpochMilli())).statusCode()).isEqualTo(200);
			Thread.sleep(2000);
			assertThat(context.getBean(Handlers.class).ran("work")).doesNotContain(id);
			assertThat(scheduler.find("work", id)).map(TaskInfo::state).hasValue(TaskState.READY);
		}
		finally {
			control.resume("work");
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> context.getBean(Handlers.class).ran("work").contains(id));
	}

	/**
	 * The dashboard offers reschedule on any scheduled task, a recurring occurrence
	 * included; moved past its tick plus the misfire threshold, it is judged a missed
	 * tick: deleted by the next recur_advance, never run. The 200 and the audit say it
	 * was moved.
	 */
	@Test
	void aRecurringOccurrenceIsNotRescheduledItsTimeIsItsTick(CapturedOutput output) throws Exception {
		RecurringTasks recurring = context.getBean(RecurringTasks.class);
		// A minute apart: the later of the two occurrences created ahead is due a minute
		// or more from now, so it is still scheduled when the request arrives.
		recurring.upsert(RecurringSchedule.fixedRate("every-minute", "work", Duration.ofMinutes(1))
			.misfireThreshold(Duration.ofSeconds(1)));
		Http reader = Http.as(context, DashboardTestApplications.READER);
		List<String> occurrences = new ArrayList<>();
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			occurrences.clear();
			JsonNode scheduled = Http.json(reader.get(D + "/api/queue/scheduled" + Http.query("name", "work")));
			for (JsonNode task : scheduled.findValues("id")) {
				if (task.asString().startsWith("every-minute:")) {
					occurrences.add(task.asString());
				}
			}
			return occurrences.size() == 2;
		});
		TaskId occurrence = TaskId.of(occurrences.get(1));
		TaskInfo before = scheduler.find("work", occurrence).orElseThrow();
		Instant at = Instant.now().plus(Duration.ofSeconds(8)).truncatedTo(ChronoUnit.MILLIS);
		HttpResponse<String> refused = reschedule("work", occurrence, Long.toString(at.toEpochMilli()));
		try {
			// The schedule's gate judges an occurrence by the tick in its id: moved past
			// the misfire threshold it would be deleted as missed, never run.
			assertThat(refused.statusCode()).as(refused.body()).isEqualTo(409);
			assertThat(Http.json(refused).get("message").asString()).contains("recurring schedule 'every-minute'");
			assertThat(scheduler.find("work", occurrence)).map(TaskInfo::dueAt).hasValue(before.dueAt());
			assertThat(output).doesNotContain("action=reschedule queue=work task=" + occurrence + " to");
		}
		finally {
			recurring.remove("every-minute");
		}
	}

}

package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskId;
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
 * The schedules page's API on a real Redis: schedules listed a page at a time by id with
 * their ticks and outcomes; pause and resume; a trigger that runs the schedule's handler
 * once now, as a tick, without moving its ticks; a paused schedule refused a trigger
 * (409, nothing created); unknown (404) and invalid (400) schedule ids; every action
 * audited with the schedule's queue.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class DashboardSchedulesIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final String D = DashboardTestApplications.D;

	private static ConfigurableApplicationContext context;

	private static RecurringTasks recurring;

	@BeforeAll
	static void start(TestRedis redis) {
		context = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class });
		recurring = context.getBean(RecurringTasks.class);
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void schedulesAreListedAPageAtATimeByIdWithTheirTicks() throws Exception {
		List<String> ids = List.of("page-a", "page-b", "page-c", "page-d", "page-e");
		for (String id : ids) {
			recurring.upsert(RecurringSchedule.cron(id, "work", "0 0 3 * * *"));
		}
		Http reader = Http.as(context, DashboardTestApplications.READER);
		List<String> listed = new ArrayList<>();
		String after = null;
		int pages = 0;
		do {
			HttpResponse<String> response = reader.get(D + "/api/schedules"
					+ ((after != null) ? Http.query("after", after, "limit", "2") : Http.query("limit", "2")));
			assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
			JsonNode page = Http.json(response);
			assertThat(page.get("schedules").size()).isLessThanOrEqualTo(2);
			page.get("schedules").forEach((schedule) -> listed.add(schedule.get("id").asString()));
			after = page.get("next").isNull() ? null : page.get("next").asString();
			pages++;
		}
		while (after != null && pages < 20);
		assertThat(listed).containsSubsequence(ids).doesNotHaveDuplicates();
		JsonNode one = Http.json(reader.get(D + "/api/schedule" + Http.query("id", "page-c")));
		assertThat(one.get("queue").asString()).isEqualTo("work");
		assertThat(one.get("expression").asString()).isEqualTo("0 0 3 * * *");
		assertThat(Instant.parse(one.get("nextTick").asString())).isAfter(Instant.now());
		assertThat(one.get("paused").asBoolean()).isFalse();
		assertThat(one.get("lastTick").isNull()).isTrue();
		for (String id : ids) {
			recurring.remove(id);
		}
	}

	@Test
	void aTriggerRunsTheHandlerOnceNowAsATickWithoutMovingTheTicks(CapturedOutput output) throws Exception {
		RecurringScheduleInfo before = recurring
			.upsert(RecurringSchedule.fixedRate("on-demand", "work", Duration.ofDays(365)).payload("triggered"));
		Http writer = Http.as(context, DashboardTestApplications.WRITER);
		HttpResponse<String> trigger = writer.write(D, D + "/api/schedule/trigger" + Http.query("id", "on-demand"));
		assertThat(trigger.statusCode()).as(trigger.body()).isEqualTo(200);
		TaskId occurrence = TaskId.of(Http.json(trigger).get("task").asString());
		assertThat(occurrence.value()).startsWith("on-demand:");
		Handlers handlers = context.getBean(Handlers.class);
		await().atMost(WAIT).until(() -> handlers.runs("work", occurrence).size() == 1);
		assertThat(handlers.runs("work", occurrence).get(0).payload()).isEqualTo("triggered");
		RecurringScheduleInfo after = await().atMost(WAIT)
			.until(() -> recurring.find("on-demand").orElseThrow(), (info) -> info.lastOutcome() != null);
		assertThat(after.lastOutcome()).isEqualTo("succeeded");
		assertThat(after.lastTick())
			.isEqualTo(Instant.ofEpochMilli(Long.parseLong(occurrence.value().substring("on-demand:".length()))));
		assertThat(after.nextTick()).as("the ticks did not move").isEqualTo(before.nextTick());
		assertThat(after.occurrences()).isEqualTo(before.occurrences() + 1);
		assertThat(output)
			.contains("user=writer action=trigger-schedule queue=work task=" + occurrence + " affected=1");
		// The page shows the outcome.
		JsonNode listed = Http.json(Http.as(context, DashboardTestApplications.READER)
			.get(D + "/api/schedule" + Http.query("id", "on-demand")));
		assertThat(listed.get("lastOutcome").asString()).isEqualTo("succeeded");
		recurring.remove("on-demand");
	}

	@Test
	void aPausedScheduleIsNotTriggeredAndResumesFromItsNextTick(CapturedOutput output) throws Exception {
		recurring.upsert(RecurringSchedule.fixedRate("held", "work", Duration.ofDays(365)));
		Http writer = Http.as(context, DashboardTestApplications.WRITER);
		HttpResponse<String> pause = writer.write(D, D + "/api/schedule/pause" + Http.query("id", "held"));
		assertThat(pause.statusCode()).as(pause.body()).isEqualTo(200);
		assertThat(recurring.find("held").orElseThrow().paused()).isTrue();
		long occurrences = recurring.find("held").orElseThrow().occurrences();
		HttpResponse<String> refused = writer.write(D, D + "/api/schedule/trigger" + Http.query("id", "held"));
		assertThat(refused.statusCode()).as(refused.body()).isEqualTo(409);
		assertThat(Http.json(refused).get("message").asString()).contains("'held'").contains("paused");
		assertThat(recurring.find("held").orElseThrow().occurrences()).isEqualTo(occurrences);
		assertThat(output).contains("user=writer action=pause-schedule queue=work task=held affected=1",
				"user=writer action=trigger-schedule queue=work task=held affected=unknown");
		HttpResponse<String> resume = writer.write(D, D + "/api/schedule/resume" + Http.query("id", "held"));
		assertThat(resume.statusCode()).as(resume.body()).isEqualTo(200);
		RecurringScheduleInfo resumed = recurring.find("held").orElseThrow();
		assertThat(resumed.paused()).isFalse();
		assertThat(resumed.nextTick()).isAfter(Instant.now());
		recurring.remove("held");
	}

	@Test
	void unknownSchedulesAre404AndInvalidIds400() throws Exception {
		Http writer = Http.as(context, DashboardTestApplications.WRITER);
		assertThat(writer.get(D + "/api/schedule" + Http.query("id", "never-declared")).statusCode()).isEqualTo(404);
		for (String action : List.of("pause", "resume", "trigger")) {
			assertThat(writer.write(D, D + "/api/schedule/" + action + Http.query("id", "never-declared")).statusCode())
				.as(action)
				.isEqualTo(404);
			HttpResponse<String> invalid = writer.write(D, D + "/api/schedule/" + action + Http.query("id", "a b"));
			assertThat(invalid.statusCode()).as(action).isEqualTo(400);
			assertThat(Http.json(invalid).get("message").asString()).contains("'a b'");
		}
		assertThat(writer.get(D + "/api/schedule" + Http.query("id", "a b")).statusCode()).isEqualTo(400);
		assertThat(writer.get(D + "/api/schedules" + Http.query("after", "a b")).statusCode()).isEqualTo(400);
		assertThat(writer.get(D + "/api/schedules" + Http.query("limit", "0")).statusCode()).isEqualTo(400);
		assertThat(writer.write(D, D + "/api/schedule/remove" + Http.query("id", "never-declared")).statusCode())
			.isIn(404, 405);
	}

}

package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.dashboard.DashboardTestApplications.Handlers;
import dev.delayedtasks.dashboard.DashboardTestApplications.Letter;
import dev.delayedtasks.dashboard.DashboardTestApplications.Run;
import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Task and dead-letter actions through the dashboard's API on a real Redis, with payloads
 * shown: each action only in the state it is for (a cancel of a running task asks it to
 * stop), the same id again, another queue's name, the audit, a listener that throws; a
 * payload read, mended and redriven (its headers kept; not JSON is a 400, a live task a
 * 404); one dead letter deleted; a dead-letter group of more than one step's worth
 * redriven or deleted in bounded steps, the other group left as it was.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class DashboardActionsIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final String D = DashboardTestApplications.D;

	private static final Pattern GROUP_AUDIT = Pattern
		.compile("user=writer action=(\\S+)-group queue=(\\S+) task=(\\S+) affected=(\\d+)");

	private static final JsonMapper json = JsonMapper.builder().build();

	private static ConfigurableApplicationContext context;

	private static DelayedTaskScheduler scheduler;

	private static DeadLetters deadLetters;

	private static Handlers handlers;

	@BeforeAll
	static void start(TestRedis redis) {
		context = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class, MoreHandlers.class },
				"--delayed-tasks.dashboard.show-payloads=true", "--delayed-tasks.worker.lease-duration=3s",
				"--delayed-tasks.queues.groups-redrive.concurrency=4",
				"--delayed-tasks.queues.groups-delete.concurrency=4");
		scheduler = context.getBean(DelayedTaskScheduler.class);
		deadLetters = context.getBean(DeadLetters.class);
		handlers = context.getBean(Handlers.class);
	}

	@AfterAll
	static void stop() {
		context.getBean(MoreHandlers.class).release.countDown();
		context.close();
	}

	@Test
	void aScheduledTaskCannotBeRedrivenOrDeletedAsADeadLetter() throws Exception {
		TaskId id = scheduler.schedule("work", "x", Duration.ofHours(1));
		TaskInfo before = scheduler.find("work", id).orElseThrow();
		assertThat(act("work", id, "redrive").statusCode()).isEqualTo(404);
		assertThat(act("work", id, "delete").statusCode()).isEqualTo(404);
		assertThat(scheduler.find("work", id).orElseThrow()).isEqualTo(before);
	}

	@Test
	void aDeadLetterCannotBeCancelledOrRun() throws Exception {
		TaskId id = scheduler.enqueue("doomed", "x");
		awaitState("doomed", id, TaskState.DEAD);
		TaskInfo before = scheduler.find("doomed", id).orElseThrow();
		assertThat(act("doomed", id, "cancel").statusCode()).isEqualTo(404);
		assertThat(act("doomed", id, "run").statusCode()).isEqualTo(404);
		assertThat(scheduler.find("doomed", id).orElseThrow()).isEqualTo(before);
	}

	/**
	 * Cancel has the library's meaning: a running task is asked to stop (interrupted, not
	 * retried, deleted when its run ends), answered as the action {@code stop}. Run,
	 * redrive and delete do not apply to it and leave it as it was.
	 */
	@Test
	void aRunningTaskIsAskedToStopByCancelAndCannotBeRunRedrivenOrDeleted(CapturedOutput output) throws Exception {
		MoreHandlers more = context.getBean(MoreHandlers.class);
		TaskId id = scheduler.enqueue("slow", "x");
		awaitState("slow", id, TaskState.ACTIVE);
		TaskInfo before = scheduler.find("slow", id).orElseThrow();
		for (String action : List.of("run", "redrive", "delete")) {
			assertThat(act("slow", id, action).statusCode()).as(action).isEqualTo(404);
			assertThat(scheduler.find("slow", id).orElseThrow()).as("after " + action).isEqualTo(before);
		}
		HttpResponse<String> cancel = act("slow", id, "cancel");
		assertThat(cancel.statusCode()).as(cancel.body()).isEqualTo(200);
		assertThat(Http.json(cancel).get("action").asString()).isEqualTo("stop");
		assertThat(Http.json(cancel).get("affected").asInt()).isEqualTo(1);
		await().atMost(WAIT).untilTrue(more.interrupted);
		await().atMost(WAIT).until(() -> scheduler.find("slow", id).isEmpty());
		assertThat(deadLetters.list("slow", 10)).isEmpty();
		assertThat(output).contains("user=writer action=cancel queue=slow task=" + id + " affected=1");
	}

	/**
	 * Run is for a scheduled task: a ready task (here in a paused queue) is already in
	 * line, and rescheduling it would only move it back.
	 */
	@Test
	void runOnAReadyTaskAnswers404AndChangesNothing() throws Exception {
		context.getBean(QueueControl.class).pause("parked");
		TaskId id = scheduler.schedule(TaskRequest.of("parked", "x").delay(Duration.ofMillis(1)));
		awaitState("parked", id, TaskState.READY);
		TaskInfo before = scheduler.find("parked", id).orElseThrow();
		Thread.sleep(50);
		HttpResponse<String> run = act("parked", id, "run");
		TaskInfo after = scheduler.find("parked", id).orElseThrow();
		assertThat(run.statusCode()).as(run.body() + "; due " + before.dueAt() + " -> " + after.dueAt()).isEqualTo(404);
		assertThat(after).isEqualTo(before);
	}

	@Test
	void unknownIdsAnswer404AndBadIds400WithAReasonAndNoStackTrace() throws Exception {
		for (String action : List.of("cancel", "run", "redrive", "delete")) {
			assertThat(act("work", TaskId.of("never-existed"), action).statusCode()).isEqualTo(404);
		}
		Http writer = Http.as(context, DashboardTestApplications.WRITER);
		HttpResponse<String> bad = writer.write(D, D + "/api/task/cancel" + Http.query("queue", "work", "id", "a b"));
		assertThat(bad.statusCode()).isEqualTo(400);
		assertThat(Http.json(bad).get("message").asString()).startsWith("Task id 'a b' is invalid");
		assertThat(bad.body()).doesNotContain("\tat ", "Exception");
		HttpResponse<String> badQueue = writer.write(D, D + "/api/queue/pause" + Http.query("name", "a b"));
		assertThat(badQueue.statusCode()).isEqualTo(400);
		assertThat(Http.json(badQueue).get("message").asString()).startsWith("Queue name 'a b' is invalid");
		assertThat(writer.write(D, D + "/api/queue/pause" + Http.query("name", "never-known")).statusCode())
			.isEqualTo(404);
		// The payload is a read like the others: a name that cannot be a queue's is a
		// 400.
		for (String queue : List.of("a b", "{work}", "work:0}:p:x")) {
			HttpResponse<String> payload = writer
				.get(D + "/api/task/payload" + Http.query("queue", queue, "id", "never-existed"));
			assertThat(payload.statusCode()).as(queue + " " + payload.body()).isEqualTo(400);
			assertThat(Http.json(payload).get("message").asString()).startsWith("Queue name '");
		}
		assertThat(writer.get(D + "/api/task/payload" + Http.query("queue", "work", "id", "a b")).statusCode())
			.isEqualTo(400);
	}

	@Test
	void theSameIdAgain() throws Exception {
		TaskId id = TaskId.of("same-id-again");
		scheduler.schedule(TaskRequest.of("work", "x").id(id).delay(Duration.ofHours(1)));
		assertThat(act("work", id, "cancel").statusCode()).isEqualTo(200);
		assertThat(act("work", id, "cancel").statusCode()).isEqualTo(404);
		assertThat(act("work", id, "run").statusCode()).isEqualTo(404);
		Http reader = Http.as(context, DashboardTestApplications.READER);
		String task = D + "/api/task" + Http.query("queue", "work", "id", id.value());
		HttpResponse<String> gone = reader.get(task);
		assertThat(gone.statusCode()).as(gone.body()).isEqualTo(404);
		scheduler.schedule(TaskRequest.of("work", "y").id(id).delay(Duration.ofHours(2)));
		HttpResponse<String> again = reader.get(task);
		assertThat(again.body()).contains("\"state\":\"SCHEDULED\"", "\"failures\":0", "\"deliveries\":0")
			.doesNotContain("outcome\":{");
		assertThat(act("work", id, "run").statusCode()).isEqualTo(200);
		await().atMost(WAIT).until(() -> handlers.ran("work").contains(id));
	}

	@Test
	void aTaskOfOneQueueCannotBeSeenOrActedOnThroughAnother() throws Exception {
		TaskId id = scheduler.schedule("work", "x", Duration.ofHours(1));
		scheduler.schedule("idle", "x", Duration.ofHours(1));
		TaskInfo before = scheduler.find("work", id).orElseThrow();
		for (String action : List.of("cancel", "run", "redrive", "delete")) {
			assertThat(act("idle", id, action).statusCode()).isEqualTo(404);
		}
		Http reader = Http.as(context, DashboardTestApplications.READER);
		String idle = Http.query("queue", "idle", "id", id.value());
		assertThat(reader.get(D + "/api/task" + idle).statusCode()).isEqualTo(404);
		assertThat(reader.get(D + "/api/task/payload" + idle).statusCode()).isEqualTo(404);
		assertThat(scheduler.find("work", id).orElseThrow()).isEqualTo(before);
	}

	@Test
	void aScheduledOrReadyTaskIsRescheduledAndOthersAreNot(CapturedOutput output) throws Exception {
		Http writer = Http.as(context, DashboardTestApplications.WRITER);
		TaskId id = scheduler.schedule("work", "x", Duration.ofHours(1));
		Instant at = Instant.now().plus(Duration.ofHours(5)).truncatedTo(ChronoUnit.MILLIS);
		HttpResponse<String> moved = writer.write(D, D + "/api/task/reschedule"
				+ Http.query("queue", "work", "id", id.value(), "at", Long.toString(at.toEpochMilli())));
		assertThat(moved.statusCode()).as(moved.body()).isEqualTo(200);
		assertThat(Http.json(moved).get("action").asString()).isEqualTo("reschedule");
		assertThat(scheduler.find("work", id).orElseThrow().dueAt()).isEqualTo(at);
		assertThat(output)
			.contains("user=writer action=reschedule queue=work task=" + id + " to " + at + " affected=1");
		// A dead letter is not scheduled or ready: nothing moves.
		TaskId dead = scheduler.enqueue("doomed", "x");
		awaitState("doomed", dead, TaskState.DEAD);
		TaskInfo before = scheduler.find("doomed", dead).orElseThrow();
		assertThat(
				writer
					.write(D,
							D + "/api/task/reschedule" + Http.query("queue", "doomed", "id", dead.value(), "at",
									Long.toString(at.toEpochMilli())))
					.statusCode())
			.isEqualTo(404);
		assertThat(scheduler.find("doomed", dead).orElseThrow()).isEqualTo(before);
		// Without a due time, or with one that is not a number: 400, nothing moves.
		for (String query : List.of(Http.query("queue", "work", "id", id.value()),
				Http.query("queue", "work", "id", id.value(), "at", "tomorrow"))) {
			assertThat(writer.write(D, D + "/api/task/reschedule" + query).statusCode()).as(query).isEqualTo(400);
		}
		assertThat(scheduler.find("work", id).orElseThrow().dueAt()).isEqualTo(at);
	}

	@Test
	void aTasksHeadersAndLastStackTraceAreShownToAReader() throws Exception {
		TaskId id = scheduler.schedule(TaskRequest.of("doomed", "x").header("tenant", "acme"));
		awaitState("doomed", id, TaskState.DEAD);
		Http reader = Http.as(context, DashboardTestApplications.READER);
		HttpResponse<String> response = reader
			.get(D + "/api/task/details" + Http.query("queue", "doomed", "id", id.value()));
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		JsonNode details = Http.json(response);
		assertThat(details.get("headers").get("tenant").asString()).isEqualTo("acme");
		assertThat(details.get("stackTrace").asString()).contains(NonRetryableTaskException.class.getName());
		// A task that never failed has no stack trace; one that does not exist shows
		// none.
		TaskId fresh = scheduler.schedule("work", "x", Duration.ofHours(1));
		assertThat(Http.json(reader.get(D + "/api/task/details" + Http.query("queue", "work", "id", fresh.value())))
			.get("stackTrace")
			.asString()).isEmpty();
		JsonNode none = Http.json(reader.get(D + "/api/task/details" + Http.query("queue", "work", "id", "nothing")));
		assertThat(none.get("headers").isEmpty()).isTrue();
		assertThat(reader.get(D + "/api/task/details" + Http.query("queue", "bad name", "id", "x")).statusCode())
			.isEqualTo(400);
	}

	@Test
	void everyWriteIsAuditedAndRefusedOnesAreNot(CapturedOutput output) throws Exception {
		TaskId refused = scheduler.schedule("work", "x", Duration.ofHours(1));
		String cancelRefused = D + "/api/task/cancel" + Http.query("queue", "work", "id", refused.value());
		assertThat(Http.as(context, DashboardTestApplications.READER).write(D, cancelRefused).statusCode())
			.isEqualTo(403);
		Http writer = Http.as(context, DashboardTestApplications.WRITER);
		assertThat(writer.post(cancelRefused).statusCode()).isEqualTo(403);
		assertThat(writer.send("POST", cancelRefused, Map.of("X-CSRF-TOKEN", writer.csrfToken(D))).statusCode())
			.isEqualTo(403);
		assertThat(output).doesNotContain("task=" + refused);
		TaskId cancelled = scheduler.schedule("work", "x", Duration.ofHours(1));
		assertThat(act("work", cancelled, "cancel").statusCode()).isEqualTo(200);
		assertThat(output).contains("user=writer action=cancel queue=work task=" + cancelled + " affected=1");
		writer.write(D, D + "/api/queue/pause" + Http.query("name", "audited"));
		scheduler.schedule("audited", "x", Duration.ofHours(1));
		writer.write(D, D + "/api/queue/pause" + Http.query("name", "audited"));
		writer.write(D, D + "/api/queue/resume" + Http.query("name", "audited"));
		assertThat(output).contains("user=writer action=pause queue=audited task=- affected=0",
				"user=writer action=pause queue=audited task=- affected=1",
				"user=writer action=resume queue=audited task=- affected=1");
	}

	@Test
	void aListenerThatThrowsOnCancelDoesNotTurnADoneCancelIntoAnError(CapturedOutput output) throws Exception {
		TaskId id = scheduler.schedule("work", "x", Duration.ofHours(1));
		HttpResponse<String> cancel = act("work", id, "cancel");
		assertThat(cancel.statusCode()).as(cancel.body()).isEqualTo(200);
		assertThat(scheduler.find("work", id)).isEmpty();
		assertThat(output).contains("action=cancel queue=work task=" + id + " affected=1");
	}

	@Test
	void aDeadLettersPayloadIsShownAndRedrivenMendedWithItsHeadersKept(CapturedOutput output) throws Exception {
		TaskId id = scheduler.schedule(TaskRequest.of("mend", new Letter("", 1)).header("tenant", "acme"));
		awaitState("mend", id, TaskState.DEAD);
		String which = Http.query("queue", "mend", "id", id.value());
		Http reader = Http.as(context, DashboardTestApplications.READER);
		HttpResponse<String> payload = reader.get(D + "/api/task/payload" + which);
		assertThat(payload.statusCode()).isEqualTo(200);
		assertThat(json.readTree(Http.json(payload).get("json").asString()))
			.isEqualTo(json.readTree("{\"to\":\"\",\"copies\":1}"));
		String mended = "{\"to\":\"ann@example.com\",\"copies\":2}";
		// The edit carries the dead letter's time, the version the page read with the
		// payload.
		long deadAt = Instant.parse(Http.json(payload).get("deadAt").asString()).toEpochMilli();
		which += "&deadAt=" + deadAt;
		assertThat(reader.write(D, D + "/api/task/redrive-edited" + which, mended).statusCode()).isEqualTo(403);
		assertThat(handlers.runs("mend", id)).hasSize(1);

		HttpResponse<String> redriven = Http.as(context, DashboardTestApplications.WRITER)
			.write(D, D + "/api/task/redrive-edited" + which, mended);
		assertThat(redriven.statusCode()).as(redriven.body()).isEqualTo(200);
		assertThat(Http.json(redriven).get("action").asString()).isEqualTo("redrive-edited");
		assertThat(Http.json(redriven).get("affected").asInt()).isEqualTo(1);
		await().atMost(WAIT).until(() -> handlers.runs("mend", id).size() == 2);
		Run run = handlers.runs("mend", id).get(1);
		assertThat(run.payload()).isEqualTo(new Letter("ann@example.com", 2));
		assertThat(run.headers()).containsEntry("tenant", "acme");
		await().atMost(WAIT).until(() -> scheduler.find("mend", id).isEmpty());
		assertThat(deadLetters.list("mend", 100)).noneMatch((letter) -> letter.id().equals(id));
		assertThat(output).contains("user=writer action=redrive-edited queue=mend task=" + id + " affected=1");
	}

	@Test
	void anEditedPayloadMustBeJsonAndOnlyADeadLetterIsRedrivenWithIt() throws Exception {
		TaskId dead = scheduler.schedule(TaskRequest.of("mend", new Letter("", 1)));
		TaskId live = scheduler
			.schedule(TaskRequest.of("mend", new Letter("bob@example.com", 1)).delay(Duration.ofHours(1)));
		awaitState("mend", dead, TaskState.DEAD);
		Http writer = Http.as(context, DashboardTestApplications.WRITER);
		String stored = deadLetters.payload("mend", dead).orElseThrow();
		long deadAt = deadLetters.deadAt("mend", dead).orElseThrow().toEpochMilli();
		for (String notJson : List.of("{\"to\":", "to: ann@example.com")) {
			HttpResponse<String> refused = writer.write(D,
					D + "/api/task/redrive-edited"
							+ Http.query("queue", "mend", "id", dead.value(), "deadAt", Long.toString(deadAt)),
					notJson);
			assertThat(refused.statusCode()).as(notJson).isEqualTo(400);
			assertThat(Http.json(refused).get("message").asString()).as(notJson)
				.startsWith("The edited payload is not JSON");
		}
		assertThat(scheduler.find("mend", dead)).map(TaskInfo::state).hasValue(TaskState.DEAD);
		assertThat(deadLetters.payload("mend", dead)).hasValue(stored);

		String mended = "{\"to\":\"ann@example.com\",\"copies\":2}";
		String liveEdit = D + "/api/task/redrive-edited"
				+ Http.query("queue", "mend", "id", live.value(), "deadAt", Long.toString(deadAt));
		assertThat(writer.write(D, liveEdit, mended).statusCode()).as("a live task").isEqualTo(404);
		assertThat(scheduler.find("mend", live)).map(TaskInfo::state).hasValue(TaskState.SCHEDULED);
		HttpResponse<String> livePayload = writer
			.get(D + "/api/task/payload" + Http.query("queue", "mend", "id", live.value()));
		assertThat(json.readTree(Http.json(livePayload).get("json").asString()))
			.isEqualTo(json.readTree("{\"to\":\"bob@example.com\",\"copies\":1}"));
		String unknown = Http.query("queue", "mend", "id", "never-existed");
		assertThat(writer.write(D, D + "/api/task/redrive-edited" + unknown + "&deadAt=" + deadAt, mended).statusCode())
			.isEqualTo(404);
		assertThat(writer.get(D + "/api/task/payload" + unknown).statusCode()).isEqualTo(404);
		assertThat(handlers.runs("mend", dead)).hasSize(1);
		assertThat(handlers.runs("mend", live)).isEmpty();
	}

	@Test
	void oneDeadLetterIsDeleted(CapturedOutput output) throws Exception {
		TaskId deleted = scheduler.enqueue("doomed", "delete me");
		TaskId kept = scheduler.enqueue("doomed", "keep me");
		awaitState("doomed", deleted, TaskState.DEAD);
		awaitState("doomed", kept, TaskState.DEAD);
		HttpResponse<String> delete = act("doomed", deleted, "delete");
		assertThat(delete.statusCode()).isEqualTo(200);
		assertThat(Http.json(delete).get("action").asString()).isEqualTo("delete");
		assertThat(Http.json(delete).get("affected").asInt()).isEqualTo(1);
		assertThat(deadLetters.list("doomed", 100)).extracting(DeadLetter::id).contains(kept).doesNotContain(deleted);
		assertThat(scheduler.find("doomed", deleted)).isEmpty();
		assertThat(scheduler.find("doomed", kept)).map(TaskInfo::state).hasValue(TaskState.DEAD);
		assertThat(act("doomed", deleted, "delete").statusCode()).isEqualTo(404);
		assertThat(Http.as(context, DashboardTestApplications.READER)
			.get(D + "/api/task" + Http.query("queue", "doomed", "id", deleted.value()))
			.statusCode()).isEqualTo(404);
		assertThat(output).contains("user=writer action=delete queue=doomed task=" + deleted + " affected=1",
				"user=writer action=delete queue=doomed task=" + deleted + " affected=0");
	}

	/**
	 * 150 dead letters of one group and 30 of another, mixed: one step reads at most 100,
	 * so redriving the group takes steps; together they redrive exactly the 150 (each
	 * runs again), the 30 stay dead letters, and the audit lines name the ids.
	 */
	@Test
	void aDeadLetterGroupIsRedrivenInBoundedStepsAndTheOtherGroupStays(CapturedOutput output) throws Exception {
		Map<String, List<TaskId>> groups = deadLetterGroups("groups-redrive");
		List<JsonNode> steps = stepUntilDone("redrive", "groups-redrive", "retries-exhausted",
				IllegalStateException.class);
		assertSteps(steps, groups.get("a"), 30);
		assertThat(deadLetters.list("groups-redrive", 1000)).extracting(DeadLetter::id)
			.containsExactlyInAnyOrderElementsOf(groups.get("b"));
		MoreHandlers more = context.getBean(MoreHandlers.class);
		await().atMost(WAIT)
			.until(() -> groups.get("a").stream().allMatch((id) -> more.runs("groups-redrive", id) == 2));
		assertThat(groups.get("b")).allMatch((id) -> more.runs("groups-redrive", id) == 1);
		assertThat(auditedIds(output, "redrive", "groups-redrive"))
			.containsExactlyInAnyOrderElementsOf(groups.get("a").stream().map(TaskId::value).toList());
	}

	@Test
	void aDeadLetterGroupIsDeletedInBoundedStepsAndTheOtherGroupStays(CapturedOutput output) throws Exception {
		Map<String, List<TaskId>> groups = deadLetterGroups("groups-delete");
		HttpResponse<String> negative = Http.as(context, DashboardTestApplications.WRITER)
			.write(D, D + "/api/dead-letters/delete" + Http.query("queue", "groups-delete", "reason",
					"retries-exhausted", "exceptionType", IllegalStateException.class.getName(), "skip", "-1"));
		assertThat(negative.statusCode()).isEqualTo(400);
		List<JsonNode> steps = stepUntilDone("delete", "groups-delete", "retries-exhausted",
				IllegalStateException.class);
		assertSteps(steps, groups.get("a"), 30);
		assertThat(deadLetters.list("groups-delete", 1000)).extracting(DeadLetter::id)
			.containsExactlyInAnyOrderElementsOf(groups.get("b"));
		assertThat(groups.get("a")).allMatch((id) -> scheduler.find("groups-delete", id).isEmpty());
		assertThat(groups.get("b"))
			.allMatch((id) -> scheduler.find("groups-delete", id).map(TaskInfo::state).orElse(null) == TaskState.DEAD);
		assertThat(auditedIds(output, "delete", "groups-delete"))
			.containsExactlyInAnyOrderElementsOf(groups.get("a").stream().map(TaskId::value).toList());
	}

	/**
	 * The usual reason for a group: its handler still refuses it. Redriven, each dies
	 * again at once and comes back as the newest dead letter; the steps leave those alone
	 * (they walk by dead-letter time from the newest there was at the first step), so
	 * they end, each dead letter redriven once.
	 */
	@Test
	void aGroupWhoseLettersDieAgainAtOnceIsRedrivenOnceAndTheStepsEnd(CapturedOutput output) throws Exception {
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 150; i++) {
			requests.add(TaskRequest.of("groups-again", "x"));
		}
		List<TaskId> ids = scheduler.scheduleAll(requests).stream().map(ScheduleResult::id).toList();
		await().atMost(Duration.ofSeconds(30)).until(() -> deadLetters.count("groups-again") == 150);
		List<JsonNode> steps = stepUntilDone("redrive", "groups-again", "non-retryable",
				NonRetryableTaskException.class);
		assertThat(steps.get(0).get("from").asLong()).isPositive();
		assertSteps(steps, ids, null);
		MoreHandlers more = context.getBean(MoreHandlers.class);
		await().atMost(WAIT).until(() -> ids.stream().allMatch((id) -> more.runs("groups-again", id) == 2));
		await().atMost(WAIT).until(() -> deadLetters.count("groups-again") == 150);
		assertThat(auditedIds(output, "redrive", "groups-again"))
			.containsExactlyInAnyOrderElementsOf(ids.stream().map(TaskId::value).toList());
	}

	/**
	 * 180 dead letters in a queue: "a" (150, {@link IllegalStateException}) and "b" (30,
	 * {@link IllegalArgumentException}), one "b" after every five "a".
	 */
	private static Map<String, List<TaskId>> deadLetterGroups(String queue) throws Exception {
		List<TaskRequest> requests = new ArrayList<>();
		for (int i = 0; i < 180; i++) {
			requests.add(TaskRequest.of(queue, (i % 6 == 5) ? "b" : "a").maxAttempts(1));
		}
		List<ScheduleResult> results = scheduler.scheduleAll(requests);
		Map<String, List<TaskId>> groups = Map.of("a", new ArrayList<>(), "b", new ArrayList<>());
		for (int i = 0; i < 180; i++) {
			groups.get((String) requests.get(i).payload()).add(results.get(i).id());
		}
		await().atMost(Duration.ofSeconds(30)).until(() -> deadLetters.count(queue) == 180);
		// As the page shows them: two groups, by reason and exception type.
		JsonNode detail = Http
			.json(Http.as(context, DashboardTestApplications.READER).get(D + "/api/queue" + Http.query("name", queue)));
		assertThat(detail.get("deadLetterGroups")
			.valueStream()
			.map((group) -> group.get("exceptionType").asString() + " " + group.get("reason").asString() + " "
					+ group.get("count").asLong()))
			.containsExactly(IllegalStateException.class.getName() + " retries-exhausted 150",
					IllegalArgumentException.class.getName() + " retries-exhausted 30");
		return groups;
	}

	/**
	 * Step through a group as the page does: from the newest, then from each step's
	 * {@code from} and {@code skip}, until a step is {@code done}.
	 */
	private static List<JsonNode> stepUntilDone(String action, String queue, String reason, Class<?> exceptionType)
			throws Exception {
		Http writer = Http.as(context, DashboardTestApplications.WRITER);
		List<JsonNode> steps = new ArrayList<>();
		String cursor = "";
		while (steps.size() < 10) {
			String group = Http.query("queue", queue, "reason", reason, "exceptionType", exceptionType.getName())
					+ cursor;
			HttpResponse<String> response = writer.write(D, D + "/api/dead-letters/" + action + group);
			assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
			JsonNode step = Http.json(response);
			steps.add(step);
			if (step.get("done").asBoolean()) {
				return steps;
			}
			cursor = "&from=" + step.get("from").asLong() + "&skip=" + step.get("skip").asLong();
		}
		throw new AssertionError("Not done after 10 steps: " + steps);
	}

	private static void assertSteps(List<JsonNode> steps, List<TaskId> group, @Nullable Integer left) {
		assertThat(steps).as("more than one step's worth").hasSizeGreaterThanOrEqualTo(3);
		assertThat(steps).allSatisfy((step) -> assertThat(step.get("scanned").asInt()).isBetween(0, 100));
		List<String> ids = new ArrayList<>();
		steps.forEach((step) -> step.get("ids").forEach((id) -> ids.add(id.asString())));
		assertThat(ids).as("acted on each of the group once").hasSize(group.size()).doesNotHaveDuplicates();
		assertThat(ids).containsExactlyInAnyOrderElementsOf(group.stream().map(TaskId::value).toList());
		assertThat(steps.stream().mapToInt((step) -> step.get("acted").asInt()).sum()).isEqualTo(group.size());
		JsonNode last = steps.get(steps.size() - 1);
		assertThat(last.get("done").asBoolean()).isTrue();
		if (left != null) {
			assertThat(last.get("remaining").asLong()).isEqualTo(left.longValue());
		}
		assertThat(steps.subList(0, steps.size() - 1))
			.allSatisfy((step) -> assertThat(step.get("done").asBoolean()).isFalse());
	}

	private static List<String> auditedIds(CapturedOutput output, String action, String queue) {
		List<String> ids = new ArrayList<>();
		Set<String> lines = new HashSet<>();
		output.getOut().lines().filter((line) -> line.contains("dev.delayedtasks.dashboard.audit")).forEach((line) -> {
			Matcher matcher = GROUP_AUDIT.matcher(line);
			if (matcher.find() && matcher.group(1).equals(action) && matcher.group(2).equals(queue)) {
				lines.add(line);
				if (!matcher.group(3).equals("-")) {
					List<String> stepIds = List.of(matcher.group(3).split(","));
					assertThat(stepIds).as(line).hasSize(Integer.parseInt(matcher.group(4)));
					ids.addAll(stepIds);
				}
			}
		});
		assertThat(lines).as("one audit line per step").hasSizeGreaterThanOrEqualTo(3);
		return ids;
	}

	private static HttpResponse<String> act(String queue, TaskId id, String action) throws Exception {
		return Http.as(context, DashboardTestApplications.WRITER)
			.write(D, D + "/api/task/" + action + Http.query("queue", queue, "id", id.value()));
	}

	private static void awaitState(String queue, TaskId id, TaskState state) {
		await().atMost(WAIT).until(() -> scheduler.find(queue, id).map(TaskInfo::state).orElse(null) == state);
	}

	/**
	 * A listener that throws on every cancel, and the handlers of {@code slow} (waits,
	 * until interrupted or released), {@code parked} and the dead-letter group queues
	 * (refuse the first run of each task: "a" with an {@link IllegalStateException}, "b"
	 * with an {@link IllegalArgumentException}).
	 */
	@Configuration(proxyBeanMethods = false)
	static class MoreHandlers {

		final CountDownLatch release = new CountDownLatch(1);

		final AtomicBoolean interrupted = new AtomicBoolean();

		private final Map<String, List<TaskId>> runs = new ConcurrentHashMap<>();

		@Bean
		DelayedTaskListener throwingListener() {
			return new DelayedTaskListener() {

				@Override
				public void cancelled(String queue, TaskId id) {
					throw new StackOverflowError("listener blew up on cancel of " + id);
				}

			};
		}

		@DelayedTaskHandler(queue = "slow")
		void slow(String payload, TaskContext context) throws InterruptedException {
			try {
				this.release.await(60, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				this.interrupted.set(true);
				throw ex;
			}
		}

		@DelayedTaskHandler(queue = "parked")
		void parked(String payload, TaskContext context) {
		}

		@DelayedTaskHandler(queue = "groups-redrive")
		void groupsRedrive(String payload, TaskContext context) {
			group(payload, context);
		}

		@DelayedTaskHandler(queue = "groups-again")
		void groupsAgain(String payload, TaskContext context) {
			this.runs.computeIfAbsent(context.queue(), (queue) -> new CopyOnWriteArrayList<>()).add(context.id());
			throw new NonRetryableTaskException("refused, every time");
		}

		@DelayedTaskHandler(queue = "groups-delete")
		void groupsDelete(String payload, TaskContext context) {
			group(payload, context);
		}

		private void group(String payload, TaskContext context) {
			List<TaskId> ran = this.runs.computeIfAbsent(context.queue(), (queue) -> new CopyOnWriteArrayList<>());
			ran.add(context.id());
			if (ran.stream().filter(context.id()::equals).count() == 1) {
				if (payload.equals("a")) {
					throw new IllegalStateException("a refused");
				}
				throw new IllegalArgumentException("b refused");
			}
		}

		long runs(String queue, TaskId id) {
			return this.runs.getOrDefault(queue, List.of()).stream().filter(id::equals).count();
		}

	}

}

package dev.delayedtasks.dashboard;

import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.dashboard.DashboardTestApplications.Handlers;
import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.security.web.SecurityFilterChain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard in a real servlet application with Spring Security, over HTTP, next to a
 * catch-all chain of the application that denies everything but its error page: every
 * route answers 401 without credentials, 403 without a dashboard role, reads for the read
 * role, writes only for the write role, only with the CSRF token of its HTTP session and
 * only with the dashboard's header (a refusal is a 403 with a JSON reason, also when the
 * application's chain denies the error page); each allowed write takes effect in Redis
 * and is audited; unknown queues and tasks answer 404, invalid names and missing
 * parameters 400; payloads are refused unless shown; writes can be disabled for the write
 * role; a custom path below a context path works; the dashboard can be turned off (no
 * bean of it is left); a bad path stops start-up naming the property.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class DashboardSecurityIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final String D = DashboardTestApplications.D;

	private static final String READER = DashboardTestApplications.READER;

	private static final String WRITER = DashboardTestApplications.WRITER;

	private static final String OTHER = DashboardTestApplications.OTHER;

	/** Its handler succeeds and records what it ran. */
	private static final String WORK = "work";

	private static final String GUARDED = "guarded";

	/** Its handler refuses the first run of every task, for good. */
	private static final String FAILING = "fail-once";

	private static final String WRITE_HEADER = DashboardController.WRITE_HEADER;

	private static ConfigurableApplicationContext shared;

	private final TestRedis redis;

	DashboardSecurityIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@BeforeAll
	static void startSharedApplication(TestRedis redis) {
		shared = start(redis, "shared");
	}

	@AfterAll
	static void stopSharedApplication() {
		if (shared != null) {
			shared.close();
		}
	}

	@Test
	void everyRouteAsksForCredentialsThenForARoleAndWritesForTheWriteRoleAndTheSessionsCsrfToken() throws Exception {
		DelayedTaskScheduler scheduler = shared.getBean(DelayedTaskScheduler.class);
		TaskId toCancel = scheduler.schedule(WORK, "cancel me", Duration.ofHours(1));
		TaskId toRun = scheduler.schedule(WORK, "run me", Duration.ofHours(1));
		TaskId dead = scheduler.enqueue(FAILING, "fail once");
		awaitState(shared, FAILING, dead, TaskState.DEAD);
		List<String> reads = List.of(D + "/", D + "/assets/dashboard.js", D + "/api/session", D + "/api/queues",
				D + "/api/schedules", D + "/api/schedule" + Http.query("id", GUARDED), D + "/api/instances",
				D + "/api/queue" + Http.query("name", WORK), D + "/api/queue/scheduled" + Http.query("name", WORK),
				D + "/api/queue/running" + Http.query("name", WORK),
				D + "/api/task" + Http.query("queue", WORK, "id", toCancel.value()));
		List<String> writes = writes(toCancel, toRun, dead);
		Http anonymous = Http.anonymous(shared);
		Http other = Http.as(shared, OTHER);
		Http reader = Http.as(shared, READER);
		Http writer = Http.as(shared, WRITER);

		assertThat(statuses(reads, anonymous::get)).isEqualTo(expect(reads, 401));
		assertThat(statuses(reads, other::get)).isEqualTo(expect(reads, 403));
		assertThat(statuses(reads, reader::get)).isEqualTo(expect(reads, 200));
		assertThat(statuses(reads, writer::get)).isEqualTo(expect(reads, 200));

		// A write that carries the CSRF token of a session reaches the role check.
		Http writerSession = Http.as(shared, WRITER);
		String writerToken = writerSession.csrfToken(D);
		String readerToken = reader.csrfToken(D);
		Http anonymousInWritersSession = writerSession.withLogin(null);
		assertThat(statuses(writes, (path) -> post(anonymousInWritersSession, path, writerToken)))
			.as("no credentials, the token of a writer's session")
			.isEqualTo(expect(writes, 401));
		assertThat(statuses(writes, (path) -> post(reader, path, readerToken))).as("the reader with its token")
			.isEqualTo(expect(writes, 403));
		Http otherInReadersSession = reader.withLogin(OTHER);
		assertThat(statuses(writes, (path) -> post(otherInReadersSession, path, readerToken)))
			.as("other with a session's token")
			.isEqualTo(expect(writes, 403));
		// Without a valid token the CSRF filter refuses first, before the Basic
		// credentials are read, whoever sends them.
		assertThat(statuses(writes, (path) -> post(anonymous, path, null))).as("no credentials, no token")
			.isEqualTo(expect(writes, 403));
		assertThat(statuses(writes, (path) -> post(other, path, null))).as("other without a token")
			.isEqualTo(expect(writes, 403));
		assertThat(statuses(writes, (path) -> post(writerSession, path, null))).as("the writer without the token")
			.isEqualTo(expect(writes, 403));
		assertThat(statuses(writes, (path) -> post(writerSession, path, "not-the-token")))
			.as("the writer with a wrong token")
			.isEqualTo(expect(writes, 403));
		assertThat(statuses(writes, (path) -> post(writer, path, readerToken)))
			.as("the writer with another session's token")
			.isEqualTo(expect(writes, 403));
		// Each refusal is the dashboard's own, with its reason.
		for (HttpResponse<String> refused : List.of(post(reader, writes.get(0), readerToken),
				post(writerSession, writes.get(0), null))) {
			assertThat(refused.headers().firstValue("Content-Type"))
				.hasValueSatisfying((type) -> assertThat(type).startsWith("application/json"));
			assertThat(Http.json(refused).get("message").asString()).startsWith(
					"Refused: the dashboard's writes need the role DELAYED_TASKS_WRITE and the page's CSRF token");
		}

		assertNothingChanged(shared, toCancel, toRun, dead);
	}

	@Test
	void aWriteWithoutTheDashboardsHeaderIsRefusedAndChangesNothing(CapturedOutput output) throws Exception {
		DelayedTaskScheduler scheduler = shared.getBean(DelayedTaskScheduler.class);
		TaskId toCancel = scheduler.schedule(WORK, "cancel me", Duration.ofHours(1));
		TaskId toRun = scheduler.schedule(WORK, "run me", Duration.ofHours(1));
		TaskId dead = scheduler.enqueue(FAILING, "fail once");
		awaitState(shared, FAILING, dead, TaskState.DEAD);
		Http writer = Http.as(shared, WRITER);
		String token = writer.csrfToken(D);
		List<String> writes = new ArrayList<>(writes(toCancel, toRun, dead));
		writes.add(D + "/api/task/redrive-edited" + Http.query("queue", FAILING, "id", dead.value()));
		for (String path : writes) {
			HttpResponse<String> refused = writer.send("POST", path,
					Map.of("X-CSRF-TOKEN", token, "Content-Type", "application/json"), "\"mended\"");
			assertThat(refused.statusCode()).as(path).isEqualTo(403);
			assertThat(Http.json(refused).get("message").asString()).as(path)
				.isEqualTo("A write through the delayed-tasks dashboard must carry the header " + WRITE_HEADER
						+ ", as its page sends it");
		}
		assertNothingChanged(shared, toCancel, toRun, dead);
		assertThat(output).doesNotContain("task=" + toCancel, "task=" + toRun, "task=" + dead);
		// The same write with the header goes through.
		assertThat(writer
			.send("POST", D + "/api/queue/pause" + Http.query("name", WORK),
					Map.of("X-CSRF-TOKEN", token, WRITE_HEADER, "1"))
			.statusCode()).isEqualTo(200);
		shared.getBean(QueueControl.class).resume(WORK);
	}

	@Test
	void theWritersWritesWithTheTokenTakeEffectInRedisAndAreAudited(CapturedOutput output) throws Exception {
		DelayedTaskScheduler scheduler = shared.getBean(DelayedTaskScheduler.class);
		QueueControl control = shared.getBean(QueueControl.class);
		Handlers handlers = shared.getBean(Handlers.class);
		TaskId toCancel = scheduler.schedule(WORK, "cancel me", Duration.ofHours(1));
		TaskId toRun = scheduler.schedule(WORK, "run me", Duration.ofHours(1));
		TaskId dead = scheduler.enqueue(FAILING, "fail once");
		awaitState(shared, FAILING, dead, TaskState.DEAD);
		Http writer = Http.as(shared, WRITER);

		HttpResponse<String> pause = writer.write(D, D + "/api/queue/pause" + Http.query("name", WORK));
		assertThat(pause.statusCode()).isEqualTo(200);
		assertThat(Http.json(pause).get("action").asString()).isEqualTo("pause");
		assertThat(Http.json(pause).get("affected").asInt()).isEqualTo(1);
		assertThat(control.isPaused(WORK)).isTrue();
		assertThat(Http.json(writer.get(D + "/api/queue" + Http.query("name", WORK)))
			.get("view")
			.get("queue")
			.get("paused")
			.asBoolean()).isTrue();

		assertThat(writer.write(D, D + "/api/queue/resume" + Http.query("name", WORK)).statusCode()).isEqualTo(200);
		assertThat(control.isPaused(WORK)).isFalse();

		String cancelPath = D + "/api/task/cancel" + Http.query("queue", WORK, "id", toCancel.value());
		HttpResponse<String> cancel = writer.write(D, cancelPath);
		assertThat(cancel.statusCode()).isEqualTo(200);
		assertThat(Http.json(cancel).get("taskId").asString()).isEqualTo(toCancel.value());
		assertThat(scheduler.find(WORK, toCancel)).isEmpty();
		assertThat(writer.get(D + "/api/task" + Http.query("queue", WORK, "id", toCancel.value())).statusCode())
			.isEqualTo(404);
		assertThat(writer.write(D, cancelPath).statusCode()).as("nothing left to cancel").isEqualTo(404);

		assertThat(writer.write(D, D + "/api/task/run" + Http.query("queue", WORK, "id", toRun.value())).statusCode())
			.isEqualTo(200);
		await().atMost(WAIT).until(() -> handlers.ran(WORK).contains(toRun));
		await().atMost(WAIT).until(() -> scheduler.find(WORK, toRun).isEmpty());

		assertThat(writer.write(D, D + "/api/task/redrive" + Http.query("queue", FAILING, "id", dead.value()))
			.statusCode()).isEqualTo(200);
		// Redriven, it runs again and succeeds.
		await().atMost(WAIT).until(() -> handlers.runs(FAILING, dead).size() == 2);
		await().atMost(WAIT).until(() -> scheduler.find(FAILING, dead).isEmpty());
		assertThat(shared.getBean(DeadLetters.class).list(FAILING, 100))
			.noneMatch((letter) -> letter.id().equals(dead));

		assertThat(output.getOut()).contains("user=writer action=pause queue=" + WORK + " task=- affected=1",
				"user=writer action=resume queue=" + WORK + " task=- affected=1",
				"user=writer action=cancel queue=" + WORK + " task=" + toCancel + " affected=1",
				"user=writer action=cancel queue=" + WORK + " task=" + toCancel + " affected=0",
				"user=writer action=run queue=" + WORK + " task=" + toRun + " affected=1",
				"user=writer action=redrive queue=" + FAILING + " task=" + dead + " affected=1");
		assertThat(output.getOut().lines().filter((line) -> line.contains("dev.delayedtasks.dashboard.audit")))
			.as("one audit line per write")
			.hasSize(6)
			.allSatisfy((line) -> assertThat(line).contains(" INFO "));
	}

	@Test
	void unknownQueuesAndTasksAnswer404AndInvalidNamesAndMissingParameters400() throws Exception {
		TaskId known = shared.getBean(DelayedTaskScheduler.class).schedule(WORK, "stays", Duration.ofHours(1));
		Http reader = Http.as(shared, READER);
		Http writer = Http.as(shared, WRITER);
		List<String> unknownReads = List.of(D + "/api/queue" + Http.query("name", "never-seen"),
				D + "/api/queue/scheduled" + Http.query("name", "never-seen"),
				D + "/api/queue/running" + Http.query("name", "never-seen"),
				D + "/api/task" + Http.query("queue", WORK, "id", "no-such-task"),
				D + "/api/task" + Http.query("queue", "never-seen", "id", known.value()));
		assertThat(statuses(unknownReads, reader::get)).isEqualTo(expect(unknownReads, 404));
		List<String> unknownWrites = List.of(D + "/api/queue/pause" + Http.query("name", "never-seen"),
				D + "/api/queue/resume" + Http.query("name", "never-seen"),
				D + "/api/task/cancel" + Http.query("queue", WORK, "id", "no-such-task"),
				D + "/api/task/run" + Http.query("queue", WORK, "id", "no-such-task"),
				D + "/api/task/redrive" + Http.query("queue", WORK, "id", "no-such-task"),
				D + "/api/task/delete" + Http.query("queue", WORK, "id", "no-such-task"),
				D + "/api/task/redrive" + Http.query("queue", WORK, "id", known.value()),
				D + "/api/task/delete" + Http.query("queue", WORK, "id", known.value()));
		assertThat(statuses(unknownWrites, (path) -> writer.write(D, path))).isEqualTo(expect(unknownWrites, 404));

		List<String> invalidReads = List.of(D + "/api/queue" + Http.query("name", "bad name"),
				D + "/api/queue" + Http.query("name", "{bad}"),
				D + "/api/queue/scheduled" + Http.query("name", "bad name"),
				D + "/api/queue/running" + Http.query("name", "bad name"),
				D + "/api/task" + Http.query("queue", "bad name", "id", known.value()),
				D + "/api/task" + Http.query("queue", WORK, "id", "{bad}"), D + "/api/queue",
				D + "/api/queue/scheduled", D + "/api/task" + Http.query("queue", WORK),
				D + "/api/queue/scheduled" + Http.query("name", WORK, "limit", "many"));
		assertThat(statuses(invalidReads, reader::get)).isEqualTo(expect(invalidReads, 400));
		HttpResponse<String> invalid = reader.get(D + "/api/queue" + Http.query("name", "bad name"));
		assertThat(Http.json(invalid).get("message").asString()).contains("bad name");
		List<String> invalidWrites = List.of(D + "/api/queue/pause" + Http.query("name", "bad name"),
				D + "/api/queue/resume" + Http.query("name", "{bad}"),
				D + "/api/task/cancel" + Http.query("queue", "bad name", "id", known.value()),
				D + "/api/task/run" + Http.query("queue", WORK, "id", "{bad}"),
				D + "/api/task/delete" + Http.query("queue", WORK, "id", "{bad}"),
				D + "/api/dead-letters/redrive"
						+ Http.query("queue", "bad name", "reason", "failed", "exceptionType", "x"),
				D + "/api/dead-letters/delete" + Http.query("queue", WORK, "reason", "failed"),
				D + "/api/task/cancel" + Http.query("queue", WORK));
		assertThat(statuses(invalidWrites, (path) -> writer.write(D, path))).isEqualTo(expect(invalidWrites, 400));
		// A group of a queue nobody knows is refused too (the page never asks for one).
		HttpResponse<String> unknownGroup = writer.write(D, D + "/api/dead-letters/redrive"
				+ Http.query("queue", "never-seen", "reason", "failed", "exceptionType", "x"));
		assertThat(unknownGroup.statusCode()).isEqualTo(400);
		assertThat(Http.json(unknownGroup).get("message").asString()).isEqualTo("No queue 'never-seen'");
		assertThat(shared.getBean(DelayedTaskScheduler.class).find(WORK, known)).map(TaskInfo::state)
			.hasValue(TaskState.SCHEDULED);
	}

	@Test
	void payloadsAreRefusedUnlessTheyAreShown() throws Exception {
		DelayedTaskScheduler scheduler = shared.getBean(DelayedTaskScheduler.class);
		TaskId live = scheduler.schedule(WORK, "secret of a live task", Duration.ofHours(1));
		TaskId dead = scheduler.enqueue(FAILING, "secret of a dead letter");
		awaitState(shared, FAILING, dead, TaskState.DEAD);
		String refusal = "Payloads are not shown: set delayed-tasks.dashboard.show-payloads=true to see and edit them";
		for (String user : List.of(READER, WRITER)) {
			Http http = Http.as(shared, user);
			assertThat(Http.json(http.get(D + "/api/session")).get("showPayloads").asBoolean()).isFalse();
			for (TaskId id : List.of(live, dead)) {
				String queue = id.equals(live) ? WORK : FAILING;
				HttpResponse<String> payload = http
					.get(D + "/api/task/payload" + Http.query("queue", queue, "id", id.value()));
				assertThat(payload.statusCode()).as(user).isEqualTo(403);
				assertThat(payload.body()).doesNotContain("secret");
				assertThat(Http.json(payload).get("message").asString()).isEqualTo(refusal);
			}
		}
		HttpResponse<String> edit = Http.as(shared, WRITER)
			.write(D, D + "/api/task/redrive-edited" + Http.query("queue", FAILING, "id", dead.value()), "\"mended\"");
		assertThat(edit.statusCode()).isEqualTo(403);
		assertThat(Http.json(edit).get("message").asString()).isEqualTo(refusal);
		assertThat(scheduler.find(FAILING, dead)).map(TaskInfo::state).hasValue(TaskState.DEAD);
		assertThat(shared.getBean(DeadLetters.class).payload(FAILING, dead)).hasValue("\"secret of a dead letter\"");
	}

	@Test
	void thePathWithoutItsSlashRedirectsRelativelyAndTheSessionSaysWhoMayWrite() throws Exception {
		Http reader = Http.as(shared, READER);
		HttpResponse<String> redirect = reader.get(D);
		assertThat(redirect.statusCode()).isEqualTo(302);
		assertThat(redirect.headers().firstValue("Location")).hasValue("delayed-tasks/");
		URI followed = redirect.uri().resolve(redirect.headers().firstValue("Location").orElseThrow());
		assertThat(followed.getPath()).isEqualTo("/delayed-tasks/");
		HttpResponse<String> page = reader.send("GET", followed.getPath(), Map.of("Accept", "text/html"));
		assertThat(page.statusCode()).isEqualTo(200);
		assertThat(page.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("text/html"));
		assertThat(page.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(page.body()).contains("<script src=\"assets/dashboard.js\"></script>");
		assertThat(Http.anonymous(shared).get(D).statusCode()).isEqualTo(401);

		JsonNode readerSession = Http.json(reader.get(D + "/api/session"));
		assertThat(readerSession.get("user").asString()).isEqualTo("reader");
		assertThat(readerSession.get("canWrite").asBoolean()).isFalse();
		assertThat(readerSession.get("showPayloads").asBoolean()).isFalse();
		assertThat(readerSession.get("refreshMillis").asLong()).isEqualTo(5000);
		assertThat(readerSession.get("writeHeader").asString()).isEqualTo(WRITE_HEADER);
		JsonNode writerSession = Http.json(Http.as(shared, WRITER).get(D + "/api/session"));
		assertThat(writerSession.get("user").asString()).isEqualTo("writer");
		assertThat(writerSession.get("canWrite").asBoolean()).isTrue();
		assertThat(writerSession.get("csrf").get("headerName").asString()).isEqualTo("X-CSRF-TOKEN");
		assertThat(writerSession.get("csrf").get("token").asString()).isNotBlank();
	}

	@Test
	void theApplicationsCatchAllChainDeniesEverythingElseButDoesNotHideTheDashboard() throws Exception {
		Http writer = Http.as(shared, WRITER);
		assertThat(writer.get("/hello").statusCode()).isEqualTo(403);
		assertThat(writer.get("/delayed-tasks-other/").statusCode()).as("a path that only starts like the dashboard's")
			.isEqualTo(403);
		assertThat(writer.get(D + "/api/queues").statusCode()).isEqualTo(200);
		assertThat(shared.getBeansOfType(SecurityFilterChain.class)).containsOnlyKeys("applicationChain",
				DashboardAutoConfiguration.SECURITY_FILTER_CHAIN);
	}

	@Test
	void aCustomPathBelowAContextPathServesTheDashboardThereOnly() throws Exception {
		try (ConfigurableApplicationContext context = start(this.redis, "custom-path",
				"--delayed-tasks.dashboard.path=/ops/tasks", "--server.servlet.context-path=/app")) {
			TaskId id = context.getBean(DelayedTaskScheduler.class).schedule(WORK, "x", Duration.ofHours(1));
			String custom = "/app/ops/tasks";
			Http reader = Http.as(context, READER);
			HttpResponse<String> redirect = reader.get(custom);
			assertThat(redirect.statusCode()).isEqualTo(302);
			assertThat(redirect.headers().firstValue("Location")).hasValue("tasks/");
			assertThat(redirect.uri().resolve("tasks/").getPath()).isEqualTo("/app/ops/tasks/");
			assertThat(reader.get(custom + "/").body()).contains("assets/dashboard.js");
			assertThat(reader.get(custom + "/assets/dashboard.js").statusCode()).isEqualTo(200);
			assertThat(queueNames(Http.json(reader.get(custom + "/api/queues")))).contains(WORK);
			assertThat(Http.json(reader.get(custom + "/api/task" + Http.query("queue", WORK, "id", id.value())))
				.get("state")
				.asString()).isEqualTo("SCHEDULED");
			assertThat(Http.anonymous(context).get(custom + "/api/queues").statusCode()).isEqualTo(401);
			assertThat(Http.as(context, OTHER).get(custom + "/api/queues").statusCode()).isEqualTo(403);
			Http writer = Http.as(context, WRITER);
			assertThat(writer.write(custom, custom + "/api/queue/pause" + Http.query("name", WORK)).statusCode())
				.isEqualTo(200);
			assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isTrue();
			assertThat(writer.post(custom + "/api/queue/resume" + Http.query("name", WORK)).statusCode())
				.isEqualTo(403);
			assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isTrue();
			// Not at the default path, nor outside the context path.
			assertThat(reader.get("/app/delayed-tasks/api/queues").statusCode()).isEqualTo(403);
			assertThat(reader.get("/ops/tasks/api/queues").statusCode()).isEqualTo(404);
		}
	}

	@Test
	void theWriteRoleCannotActWhenWritesAreDisabled(CapturedOutput output) throws Exception {
		try (ConfigurableApplicationContext context = start(this.redis, "writes-disabled",
				"--delayed-tasks.dashboard.writes-enabled=false")) {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId toCancel = scheduler.schedule(WORK, "x", Duration.ofHours(1));
			TaskId toRun = scheduler.schedule(WORK, "y", Duration.ofHours(1));
			TaskId dead = scheduler.enqueue(FAILING, "fail once");
			awaitState(context, FAILING, dead, TaskState.DEAD);
			Http writer = Http.as(context, WRITER);
			assertThat(Http.json(writer.get(D + "/api/session")).get("canWrite").asBoolean()).isFalse();
			assertThat(writer.get(D + "/api/queues").statusCode()).isEqualTo(200);
			for (String path : writes(toCancel, toRun, dead)) {
				HttpResponse<String> refused = writer.write(D, path);
				assertThat(refused.statusCode()).as(path).isEqualTo(403);
				assertThat(Http.json(refused).get("message").asString()).as(path)
					.isEqualTo("Acting through the delayed-tasks dashboard needs writes enabled and the role "
							+ "DELAYED_TASKS_WRITE");
			}
			assertNothingChanged(context, toCancel, toRun, dead);
			assertThat(output).doesNotContain("dev.delayedtasks.dashboard.audit");
		}
	}

	@Test
	void aDisabledDashboardIsNotServedAndLeavesNoBeans() throws Exception {
		try (ConfigurableApplicationContext context = start(this.redis, "disabled",
				"--delayed-tasks.dashboard.enabled=false", "--test.application-chain=authenticated")) {
			assertThat(context.getBeanNamesForType(DashboardController.class)).isEmpty();
			assertThat(context.getBeanNamesForType(DashboardReads.class)).isEmpty();
			assertThat(context.getBeanNamesForType(DashboardAccess.class)).isEmpty();
			assertThat(context.containsBean(DashboardAutoConfiguration.SECURITY_FILTER_CHAIN)).isFalse();
			Http writer = Http.as(context, WRITER);
			for (String path : List.of("", "/", "/assets/dashboard.js", "/api/session", "/api/queues")) {
				assertThat(writer.get(D + path).statusCode()).as(path).isEqualTo(404);
			}
			// The application's own chain refuses it (no CSRF token): nothing is mapped
			// there.
			assertThat(writer.send("POST", D + "/api/queue/pause" + Http.query("name", WORK), Map.of(WRITE_HEADER, "1"))
				.statusCode()).isEqualTo(403);
			assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isFalse();
		}
	}

	@Test
	void anApplicationChainThatAlsoDeniesTheErrorPageStillGetsTheDashboardsOwn403ForARefusedWrite() throws Exception {
		try (ConfigurableApplicationContext context = start(this.redis, "deny-everything",
				"--test.application-chain=deny-everything")) {
			QueueControl control = context.getBean(QueueControl.class);
			context.getBean(DelayedTaskScheduler.class).schedule(WORK, "x", Duration.ofHours(1));
			String pause = D + "/api/queue/pause" + Http.query("name", WORK);
			Http writer = Http.as(context, WRITER);
			String token = writer.csrfToken(D);
			// Refused by the CSRF filter before the Basic credentials are read, and
			// answered by the dashboard's own handler, not through /error (which this
			// application's chain denies with its login challenge).
			HttpResponse<String> refused = writer.send("POST", pause, Map.of(WRITE_HEADER, "1"));
			assertThat(refused.statusCode()).isEqualTo(403);
			assertThat(refused.headers().firstValue("WWW-Authenticate")).isEmpty();
			assertThat(Http.json(refused).get("message").asString()).startsWith("Refused: ");
			assertThat(control.isPaused(WORK)).isFalse();
			Http reader = Http.as(context, READER);
			HttpResponse<String> readerRefused = reader.write(D, pause);
			assertThat(readerRefused.statusCode()).isEqualTo(403);
			assertThat(Http.json(readerRefused).get("message").asString()).startsWith("Refused: ");
			assertThat(Http.as(context, OTHER).get(D + "/api/queues").statusCode()).isEqualTo(403);
			assertThat(Http.anonymous(context).get(D + "/api/queues").statusCode()).isEqualTo(401);
			assertThat(control.isPaused(WORK)).isFalse();
			assertThat(writer.send("POST", pause, Map.of("X-CSRF-TOKEN", token, WRITE_HEADER, "1")).statusCode())
				.isEqualTo(200);
			assertThat(control.isPaused(WORK)).isTrue();
		}
	}

	@Test
	void aBadPathStopsStartUpNamingTheProperty() {
		Map<String, String> failures = new LinkedHashMap<>();
		for (String path : List.of("ops/", "/ops/", "/ops tasks", "/")) {
			Throwable failure = catchThrowable(
					() -> start(this.redis, "bad-path", "--delayed-tasks.dashboard.path=" + path).close());
			assertThat(failure).as(path).isNotNull();
			failures.put(path, NestedExceptionUtils.getMostSpecificCause(failure).getMessage());
		}
		assertThat(failures).allSatisfy((path, message) -> assertThat(message).as(path)
			.startsWith("delayed-tasks.dashboard.path must start with '/', not end with one")
			.endsWith("'" + path + "'"));
	}

	/**
	 * Every kind of write: pause, resume, cancel, run, redrive and delete a dead letter,
	 * redrive and delete a dead-letter group.
	 */
	private static List<String> writes(TaskId toCancel, TaskId toRun, TaskId dead) {
		String group = Http.query("queue", FAILING, "reason", "non-retryable", "exceptionType",
				NonRetryableTaskException.class.getName());
		return List.of(D + "/api/queue/pause" + Http.query("name", WORK),
				D + "/api/queue/resume" + Http.query("name", WORK),
				D + "/api/task/cancel" + Http.query("queue", WORK, "id", toCancel.value()),
				D + "/api/task/run" + Http.query("queue", WORK, "id", toRun.value()),
				D + "/api/task/reschedule" + Http.query("queue", WORK, "id", toRun.value(), "at", "1"),
				D + "/api/task/redrive" + Http.query("queue", FAILING, "id", dead.value()),
				D + "/api/task/delete" + Http.query("queue", FAILING, "id", dead.value()),
				D + "/api/dead-letters/redrive" + group, D + "/api/dead-letters/delete" + group,
				D + "/api/schedule/pause" + Http.query("id", GUARDED),
				D + "/api/schedule/resume" + Http.query("id", GUARDED),
				D + "/api/schedule/trigger" + Http.query("id", GUARDED));
	}

	private static void assertNothingChanged(ConfigurableApplicationContext context, TaskId toCancel, TaskId toRun,
			TaskId dead) {
		DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
		assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isFalse();
		assertThat(scheduler.find(WORK, toCancel)).map(TaskInfo::state).hasValue(TaskState.SCHEDULED);
		assertThat(scheduler.find(WORK, toRun)).map(TaskInfo::dueAt)
			.hasValueSatisfying((due) -> assertThat(due).isAfter(Instant.now().plus(Duration.ofMinutes(50))));
		assertThat(scheduler.find(FAILING, dead)).map(TaskInfo::state).hasValue(TaskState.DEAD);
		assertThat(context.getBean(DeadLetters.class).list(FAILING, 100))
			.anyMatch((letter) -> letter.id().equals(dead));
		assertThat(context.getBean(Handlers.class).ran(WORK)).doesNotContain(toRun);
		assertThat(context.getBean(Handlers.class).runs(FAILING, dead)).hasSize(1);
		RecurringScheduleInfo guarded = context.getBean(RecurringTasks.class).find(GUARDED).orElseThrow();
		assertThat(guarded.paused()).isFalse();
		assertThat(guarded.lastTick()).as("no occurrence started: none was triggered").isNull();
		assertThat(guarded.occurrences()).as("created by the upsert, none by a trigger").isEqualTo(2);
	}

	private static HttpResponse<String> post(Http http, String path, @Nullable String csrfToken) throws Exception {
		Map<String, String> headers = new HashMap<>();
		headers.put(WRITE_HEADER, "1");
		if (csrfToken != null) {
			headers.put("X-CSRF-TOKEN", csrfToken);
		}
		return http.send("POST", path, headers);
	}

	private static ConfigurableApplicationContext start(TestRedis redis, String suffix, String... extra) {
		List<String> args = new ArrayList<>(List.of(extra));
		if (args.stream().noneMatch((arg) -> arg.startsWith("--test.application-chain="))) {
			args.add("--test.application-chain=deny-all");
		}
		ConfigurableApplicationContext context = DashboardTestApplications.start(redis, suffix,
				new Class<?>[] { Secured.class }, args.toArray(String[]::new));
		// A schedule whose ticks are far away: only a trigger would start an occurrence.
		context.getBean(RecurringTasks.class).upsert(RecurringSchedule.fixedRate(GUARDED, WORK, Duration.ofDays(365)));
		return context;
	}

	private static void awaitState(ConfigurableApplicationContext context, String queue, TaskId id, TaskState state) {
		DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
		await().atMost(WAIT).until(() -> scheduler.find(queue, id).map(TaskInfo::state).orElse(null) == state);
	}

	private static Map<String, Integer> statuses(List<String> paths, Call call) throws Exception {
		Map<String, Integer> statuses = new LinkedHashMap<>();
		for (String path : paths) {
			statuses.put(path, call.send(path).statusCode());
		}
		return statuses;
	}

	private static Map<String, Integer> expect(List<String> paths, int status) {
		Map<String, Integer> statuses = new LinkedHashMap<>();
		paths.forEach((path) -> statuses.put(path, status));
		return statuses;
	}

	private static List<String> queueNames(JsonNode overview) {
		List<String> names = new ArrayList<>();
		overview.get("queues").forEach((view) -> names.add(view.get("queue").get("name").asString()));
		return names;
	}

	/**
	 * One request to a path.
	 */
	@FunctionalInterface
	interface Call {

		HttpResponse<String> send(String path) throws Exception;

	}

}

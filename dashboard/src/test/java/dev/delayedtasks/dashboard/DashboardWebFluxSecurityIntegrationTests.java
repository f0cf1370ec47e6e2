package dev.delayedtasks.dashboard;

import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.dashboard.DashboardTestApplications.Handlers;
import dev.delayedtasks.dashboard.DashboardWebFluxTestApplications.SecuredReactive;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.reactor.netty.NettyWebServer;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.security.web.server.SecurityWebFilterChain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard in a real WebFlux application on Netty with reactive Spring Security,
 * over HTTP, next to a catch-all chain of the application that denies everything, as
 * {@link DashboardSecurityIntegrationTests} has it on Spring MVC: every route answers 401
 * without credentials, 403 without a dashboard role, reads for the read role, writes only
 * for the write role, only with the CSRF token of its web session and only with the
 * dashboard's header (a refusal is a 403 with a JSON reason); each allowed write takes
 * effect in Redis and is audited; unknown queues answer 404 and invalid names 400; the
 * path without its slash redirects relatively, also below a base path and behind a proxy
 * that adds a prefix; an application without a chain of its own keeps Spring Security's
 * default for its other paths; a session login of the application is accepted; the
 * dashboard can be turned off.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class DashboardWebFluxSecurityIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final String D = DashboardTestApplications.D;

	private static final String READER = DashboardTestApplications.READER;

	private static final String WRITER = DashboardTestApplications.WRITER;

	private static final String OTHER = DashboardTestApplications.OTHER;

	private static final String WORK = "work";

	private static final String GUARDED = "guarded";

	private static final String FAILING = "fail-once";

	private static final String WRITE_HEADER = DashboardApi.WRITE_HEADER;

	private static ConfigurableApplicationContext shared;

	private final TestRedis redis;

	DashboardWebFluxSecurityIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@BeforeAll
	static void startSharedApplication(TestRedis redis) {
		shared = start(redis, "shared", "--test.application-chain=deny-all");
	}

	@AfterAll
	static void stopSharedApplication() {
		if (shared != null) {
			shared.close();
		}
	}

	@Test
	void itRunsOnNettyWithTheReactiveControllerAndChainOnly() {
		assertThat(((WebServerApplicationContext) shared).getWebServer()).isInstanceOf(NettyWebServer.class);
		assertThat(shared.getBeanNamesForType(ReactiveDashboardController.class)).hasSize(1);
		assertThat(shared.getBeanNamesForType(DashboardController.class)).isEmpty();
		assertThat(shared.getBean(ReactiveDashboardAccess.class))
			.isEqualTo(new ReactiveRoleAccess("DELAYED_TASKS_READ", "DELAYED_TASKS_WRITE", true));
	}

	@Test
	void everyRouteAsksForCredentialsThenForARoleAndWritesForTheWriteRoleAndTheSessionsCsrfToken() throws Exception {
		DelayedTaskScheduler scheduler = shared.getBean(DelayedTaskScheduler.class);
		TaskId toCancel = scheduler.schedule(WORK, "cancel me", Duration.ofHours(1));
		TaskId toRun = scheduler.schedule(WORK, "run me", Duration.ofHours(1));
		TaskId dead = scheduler.enqueue(FAILING, "fail once");
		awaitState(shared, FAILING, dead, TaskState.DEAD);
		List<String> reads = List.of(D, D + "/", D + "/assets/dashboard.js", D + "/api/session", D + "/api/queues",
				D + "/api/schedules", D + "/api/schedule" + Http.query("id", GUARDED), D + "/api/instances",
				D + "/api/queue" + Http.query("name", WORK), D + "/api/queue/charts" + Http.query("name", WORK),
				D + "/api/queue/scheduled" + Http.query("name", WORK),
				D + "/api/queue/running" + Http.query("name", WORK),
				D + "/api/task" + Http.query("queue", WORK, "id", toCancel.value()));
		List<String> okReads = reads.subList(1, reads.size());
		List<String> writes = writes(toCancel, toRun, dead);
		Http anonymous = Http.anonymous(shared);
		Http other = Http.as(shared, OTHER);
		Http reader = Http.as(shared, READER);
		Http writer = Http.as(shared, WRITER);

		assertThat(statuses(reads, anonymous::get)).isEqualTo(expect(reads, 401));
		assertThat(anonymous.get(D + "/api/queues").headers().firstValue("WWW-Authenticate"))
			.hasValueSatisfying((challenge) -> assertThat(challenge).startsWith("Basic"));
		assertThat(statuses(reads, other::get)).isEqualTo(expect(reads, 403));
		assertThat(statuses(okReads, reader::get)).isEqualTo(expect(okReads, 200));
		assertThat(statuses(okReads, writer::get)).isEqualTo(expect(okReads, 200));

		Http writerSession = Http.as(shared, WRITER);
		String writerToken = writerSession.csrfToken(D);
		String readerToken = reader.csrfToken(D);
		Http anonymousInWritersSession = writerSession.withLogin(null);
		assertThat(statuses(writes, (path) -> post(anonymousInWritersSession, path, writerToken)))
			.as("no credentials, the token of a writer's session")
			.isEqualTo(expect(writes, 401));
		assertThat(statuses(writes, (path) -> post(reader, path, readerToken))).as("the reader with its token")
			.isEqualTo(expect(writes, 403));
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
		for (String path : writes(toCancel, toRun, dead)) {
			HttpResponse<String> refused = writer.send("POST", path, Map.of("X-CSRF-TOKEN", token));
			assertThat(refused.statusCode()).as(path).isEqualTo(403);
			assertThat(Http.json(refused).get("message").asString()).as(path)
				.isEqualTo("A write through the delayed-tasks dashboard must carry the header " + WRITE_HEADER
						+ ", as its page sends it");
		}
		assertNothingChanged(shared, toCancel, toRun, dead);
		assertThat(output).doesNotContain("task=" + toCancel, "task=" + toRun, "task=" + dead);
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
		assertThat(writer.write(D, cancelPath).statusCode()).isEqualTo(200);
		assertThat(scheduler.find(WORK, toCancel)).isEmpty();
		assertThat(writer.write(D, cancelPath).statusCode()).as("nothing left to cancel").isEqualTo(404);

		assertThat(writer.write(D, D + "/api/task/run" + Http.query("queue", WORK, "id", toRun.value())).statusCode())
			.isEqualTo(200);
		await().atMost(WAIT).until(() -> handlers.ran(WORK).contains(toRun));

		assertThat(writer.write(D, D + "/api/task/redrive" + Http.query("queue", FAILING, "id", dead.value()))
			.statusCode()).isEqualTo(200);
		await().atMost(WAIT).until(() -> handlers.runs(FAILING, dead).size() == 2);
		await().atMost(WAIT).until(() -> scheduler.find(FAILING, dead).isEmpty());

		HttpResponse<String> trigger = writer.write(D, D + "/api/schedule/trigger" + Http.query("id", GUARDED));
		assertThat(trigger.statusCode()).as(trigger.body()).isEqualTo(200);

		assertThat(output.getOut()).contains("user=writer action=pause queue=" + WORK + " task=- affected=1",
				"user=writer action=resume queue=" + WORK + " task=- affected=1",
				"user=writer action=cancel queue=" + WORK + " task=" + toCancel + " affected=1",
				"user=writer action=cancel queue=" + WORK + " task=" + toCancel + " affected=0",
				"user=writer action=run queue=" + WORK + " task=" + toRun + " affected=1",
				"user=writer action=redrive queue=" + FAILING + " task=" + dead + " affected=1",
				"user=writer action=trigger-schedule queue=" + WORK + " task="
						+ Http.json(trigger).get("task").asString() + " affected=1");
		assertThat(output.getOut().lines().filter((line) -> line.contains("dev.delayedtasks.dashboard.audit")))
			.as("one audit line per write")
			.hasSize(7);
	}

	@Test
	void anEditedPayloadTravelsAsTheRequestBody() throws Exception {
		try (ConfigurableApplicationContext context = start(this.redis, "payloads",
				"--delayed-tasks.dashboard.show-payloads=true")) {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId dead = scheduler.enqueue(FAILING, "fail once");
			awaitState(context, FAILING, dead, TaskState.DEAD);
			Http writer = Http.as(context, WRITER);
			JsonNode payload = Http
				.json(writer.get(D + "/api/task/payload" + Http.query("queue", FAILING, "id", dead.value())));
			assertThat(payload.get("json").asString()).isEqualTo("\"fail once\"");
			long deadAt = Instant.parse(payload.get("deadAt").asString()).toEpochMilli();
			HttpResponse<String> edited = writer.write(D,
					D + "/api/task/redrive-edited"
							+ Http.query("queue", FAILING, "id", dead.value(), "deadAt", String.valueOf(deadAt)),
					"\"mended\"");
			assertThat(edited.statusCode()).as(edited.body()).isEqualTo(200);
			Handlers handlers = context.getBean(Handlers.class);
			await().atMost(WAIT).until(() -> handlers.runs(FAILING, dead).size() == 2);
			assertThat(handlers.runs(FAILING, dead).get(1).payload()).isEqualTo("mended");
		}
	}

	@Test
	void unknownQueuesAndTasksAnswer404AndInvalidNamesAndMissingParameters400() throws Exception {
		Http reader = Http.as(shared, READER);
		Http writer = Http.as(shared, WRITER);
		List<String> unknown = List.of(D + "/api/queue" + Http.query("name", "never-seen"),
				D + "/api/queue/scheduled" + Http.query("name", "never-seen"),
				D + "/api/task" + Http.query("queue", WORK, "id", "no-such-task"),
				D + "/api/schedule" + Http.query("id", "no-such-schedule"));
		assertThat(statuses(unknown, reader::get)).isEqualTo(expect(unknown, 404));
		assertThat(writer.write(D, D + "/api/queue/pause" + Http.query("name", "never-seen")).statusCode())
			.isEqualTo(404);
		List<String> invalid = List.of(D + "/api/queue" + Http.query("name", "bad name"),
				D + "/api/task" + Http.query("queue", WORK, "id", "{bad}"), D + "/api/queue",
				D + "/api/queue/scheduled" + Http.query("name", WORK, "limit", "many"));
		assertThat(statuses(invalid, reader::get)).isEqualTo(expect(invalid, 400));
		assertThat(Http.json(reader.get(D + "/api/queue" + Http.query("name", "bad name"))).get("message").asString())
			.contains("bad name");
		HttpResponse<String> unknownGroup = writer.write(D, D + "/api/dead-letters/redrive"
				+ Http.query("queue", "never-seen", "reason", "failed", "exceptionType", "x"));
		assertThat(unknownGroup.statusCode()).isEqualTo(400);
		assertThat(Http.json(unknownGroup).get("message").asString()).isEqualTo("No queue 'never-seen'");
		HttpResponse<String> payload = reader.get(D + "/api/task/payload" + Http.query("queue", WORK, "id", "x"));
		assertThat(payload.statusCode()).isEqualTo(403);
		assertThat(Http.json(payload).get("message").asString()).startsWith("Payloads are not shown");
	}

	@Test
	void thePathWithoutItsSlashRedirectsRelativelyAndTheSessionSaysWhoMayWrite() throws Exception {
		Http reader = Http.as(shared, READER);
		HttpResponse<String> redirect = reader.get(D);
		assertThat(redirect.statusCode()).isEqualTo(302);
		assertThat(redirect.headers().firstValue("Location")).hasValue("delayed-tasks/");
		HttpResponse<String> page = reader.send("GET", D + "/", Map.of("Accept", "text/html"));
		assertThat(page.statusCode()).isEqualTo(200);
		assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html;charset=UTF-8");
		assertThat(page.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(page.body()).contains("<script src=\"assets/dashboard.js\"></script>");
		assertThat(reader.get(D + "/assets/dashboard.css").headers().firstValue("Content-Type"))
			.hasValue("text/css;charset=UTF-8");
		assertThat(reader.get(D + "/assets/missing.js").statusCode()).isEqualTo(404);

		JsonNode readerSession = Http.json(reader.get(D + "/api/session"));
		assertThat(readerSession.get("user").asString()).isEqualTo("reader");
		assertThat(readerSession.get("canWrite").asBoolean()).isFalse();
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
		assertThat(shared.getBeansOfType(SecurityWebFilterChain.class)).containsOnlyKeys("applicationChain",
				ReactiveDashboardAutoConfiguration.SECURITY_WEB_FILTER_CHAIN);
	}

	@Test
	void anApplicationWithoutAChainOfItsOwnKeepsSpringSecuritysDefaultForItsOtherPaths() throws Exception {
		try (ConfigurableApplicationContext context = start(this.redis, "boot-default")) {
			assertThat(context.getBeansOfType(SecurityWebFilterChain.class)).containsOnlyKeys(
					ReactiveDashboardAutoConfiguration.DEFAULT_SECURITY_WEB_FILTER_CHAIN,
					ReactiveDashboardAutoConfiguration.SECURITY_WEB_FILTER_CHAIN);
			assertThat(Http.anonymous(context).get("/hello").statusCode()).isEqualTo(401);
			assertThat(Http.as(context, OTHER).get("/hello").body()).isEqualTo("hello from the application");
			assertThat(Http.anonymous(context).get("/login").body()).contains("name=\"_csrf\"");
			assertThat(Http.as(context, OTHER).get(D + "/api/queues").statusCode()).isEqualTo(403);
			assertThat(Http.as(context, READER).get(D + "/api/queues").statusCode()).isEqualTo(200);
		}
	}

	@Test
	void aSessionLoginOfTheApplicationReadsAndActsWithTheRoles() throws Exception {
		try (ConfigurableApplicationContext context = start(this.redis, "form-login",
				"--test.application-chain=form-login")) {
			QueueControl control = context.getBean(QueueControl.class);
			Http reader = Http.anonymous(context);
			reader.formLogin("", READER);
			assertThat(reader.get("/hello").statusCode()).isEqualTo(200);
			assertThat(reader.get(D + "/api/session").body()).contains("\"user\":\"reader\"", "\"canWrite\":false");
			assertThat(reader.write(D, D + "/api/queue/pause" + Http.query("name", WORK)).statusCode()).isEqualTo(403);
			Http other = Http.anonymous(context);
			other.formLogin("", OTHER);
			assertThat(other.get(D + "/api/queues").statusCode()).isEqualTo(403);
			Http writer = Http.anonymous(context);
			writer.formLogin("", WRITER);
			assertThat(writer.write(D, D + "/api/queue/pause" + Http.query("name", WORK)).statusCode()).isEqualTo(200);
			assertThat(control.isPaused(WORK)).isTrue();
			control.resume(WORK);
		}
	}

	@Test
	void aCustomPathBelowABasePathServesTheDashboardThereOnlyAndItsAddressesResolveThere() throws Exception {
		try (ConfigurableApplicationContext context = start(this.redis, "base-path",
				"--delayed-tasks.dashboard.path=/ops/tasks", "--spring.webflux.base-path=/app")) {
			String custom = "/app/ops/tasks";
			Http reader = Http.as(context, READER);
			HttpResponse<String> redirect = reader.get(custom);
			assertThat(redirect.statusCode()).isEqualTo(302);
			assertThat(redirect.headers().firstValue("Location")).hasValue("tasks/");
			URI page = redirect.uri().resolve("tasks/");
			assertThat(page.getPath()).isEqualTo("/app/ops/tasks/");
			HttpResponse<String> html = reader.get(page.getPath());
			assertThat(html.body()).contains("src=\"assets/dashboard.js\"");
			// The page's relative addresses, resolved against it, as a browser does.
			assertThat(reader.get(page.resolve("assets/dashboard.js").getPath()).statusCode()).isEqualTo(200);
			assertThat(reader.get(page.resolve("api/queues").getPath()).statusCode()).isEqualTo(200);
			assertThat(Http.anonymous(context).get(custom + "/api/queues").statusCode()).isEqualTo(401);
			assertThat(Http.as(context, OTHER).get(custom + "/api/queues").statusCode()).isEqualTo(403);
			Http writer = Http.as(context, WRITER);
			assertThat(writer.write(custom, custom + "/api/queue/pause" + Http.query("name", WORK)).statusCode())
				.isEqualTo(200);
			assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isTrue();
			assertThat(writer.post(custom + "/api/queue/resume" + Http.query("name", WORK)).statusCode())
				.isEqualTo(403);
			assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isTrue();
			assertThat(reader.get("/app/delayed-tasks/api/queues").statusCode()).isNotEqualTo(200);
			assertThat(reader.get("/ops/tasks/api/queues").statusCode()).isEqualTo(404);
		}
	}

	@Test
	void behindAProxyThatAddsAPrefixThePagesAddressesResolveBelowIt() throws Exception {
		try (ConfigurableApplicationContext context = start(this.redis, "proxy",
				"--server.forward-headers-strategy=framework")) {
			Http reader = Http.as(context, READER);
			Map<String, String> proxy = Map.of("X-Forwarded-Prefix", "/tasks-proxy", "X-Forwarded-Host",
					"ops.example.com", "X-Forwarded-Proto", "https");
			URI browser = URI.create("https://ops.example.com/tasks-proxy" + D);
			HttpResponse<String> redirect = reader.send("GET", D, proxy);
			assertThat(redirect.statusCode()).isEqualTo(302);
			assertThat(redirect.headers().firstValue("Location")).hasValue("delayed-tasks/");
			URI page = browser.resolve(redirect.headers().firstValue("Location").orElseThrow());
			assertThat(page.toString()).isEqualTo("https://ops.example.com/tasks-proxy/delayed-tasks/");
			HttpResponse<String> html = reader.send("GET", D + "/", proxy);
			assertThat(html.statusCode()).isEqualTo(200);
			assertThat(html.body()).contains("src=\"assets/dashboard.js\"");
			// The proxy strips its prefix: what the page asks for reaches the dashboard.
			for (String relative : List.of("assets/dashboard.js", "assets/dashboard.css", "api/session",
					"api/queues")) {
				String asked = page.resolve(relative).getPath();
				assertThat(asked).startsWith("/tasks-proxy/delayed-tasks/");
				assertThat(reader.send("GET", asked.substring("/tasks-proxy".length()), proxy).statusCode())
					.as(relative)
					.isEqualTo(200);
			}
			Http writer = Http.as(context, WRITER);
			Map<String, String> headers = new HashMap<>(proxy);
			headers.putAll(writer.pageHeaders(D));
			assertThat(writer.send("POST", D + "/api/queue/pause" + Http.query("name", WORK), headers).statusCode())
				.isEqualTo(200);
			assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isTrue();
			context.getBean(QueueControl.class).resume(WORK);
		}
	}

	@Test
	void theWriteRoleCannotActWhenWritesAreDisabled(CapturedOutput output) throws Exception {
		try (ConfigurableApplicationContext context = start(this.redis, "writes-disabled",
				"--test.application-chain=deny-all", "--delayed-tasks.dashboard.writes-enabled=false")) {
			Http writer = Http.as(context, WRITER);
			assertThat(Http.json(writer.get(D + "/api/session")).get("canWrite").asBoolean()).isFalse();
			HttpResponse<String> refused = writer.write(D, D + "/api/queue/pause" + Http.query("name", WORK));
			assertThat(refused.statusCode()).isEqualTo(403);
			assertThat(Http.json(refused).get("message").asString())
				.isEqualTo("Acting through the delayed-tasks dashboard needs writes enabled and the role "
						+ "DELAYED_TASKS_WRITE");
			assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isFalse();
			assertThat(output).doesNotContain("dev.delayedtasks.dashboard.audit");
		}
	}

	@Test
	void aDisabledDashboardIsNotServedAndLeavesNoBeans() throws Exception {
		try (ConfigurableApplicationContext context = start(this.redis, "disabled",
				"--delayed-tasks.dashboard.enabled=false", "--test.application-chain=form-login")) {
			assertThat(context.getBeanNamesForType(ReactiveDashboardController.class)).isEmpty();
			assertThat(context.getBeanNamesForType(DashboardApi.class)).isEmpty();
			assertThat(context.getBeanNamesForType(ReactiveDashboardAccess.class)).isEmpty();
			assertThat(context.getBeanNamesForType(SecurityWebFilterChain.class)).containsExactly("applicationChain");
			Http writer = Http.anonymous(context);
			writer.formLogin("", WRITER);
			for (String path : List.of("", "/", "/assets/dashboard.js", "/api/session", "/api/queues")) {
				assertThat(writer.get(D + path).statusCode()).as(path).isEqualTo(404);
			}
		}
	}

	private static List<String> writes(TaskId toCancel, TaskId toRun, TaskId dead) {
		String group = Http.query("queue", FAILING, "reason", "non-retryable", "exceptionType",
				NonRetryableTaskException.class.getName());
		return List.of(D + "/api/queue/pause" + Http.query("name", WORK),
				D + "/api/queue/resume" + Http.query("name", WORK),
				D + "/api/task/cancel" + Http.query("queue", WORK, "id", toCancel.value()),
				D + "/api/task/run" + Http.query("queue", WORK, "id", toRun.value()),
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
		assertThat(context.getBean(RecurringTasks.class).find(GUARDED).orElseThrow().paused()).isFalse();
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
		ConfigurableApplicationContext context = DashboardWebFluxTestApplications.start(redis, suffix, null,
				new Class<?>[] { SecuredReactive.class }, extra);
		context.getBean(RecurringTasks.class).upsert(RecurringSchedule.fixedRate(GUARDED, WORK, Duration.ofDays(365)));
		return context;
	}

	private static void awaitState(ConfigurableApplicationContext context, String queue, TaskId id, TaskState state) {
		DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
		await().atMost(WAIT).until(() -> scheduler.find(queue, id).map(TaskInfo::state).orElse(null) == state);
	}

	private static Map<String, Integer> statuses(List<String> paths, DashboardSecurityIntegrationTests.Call call)
			throws Exception {
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

}

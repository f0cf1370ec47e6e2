package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.dashboard.DashboardTestApplications.Handlers;
import dev.delayedtasks.dashboard.DashboardWebFluxTestApplications.OpenReactive;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard in a real WebFlux application on Netty without Spring Security on the
 * class path, on a real Redis, as {@link DashboardWithoutSecurityIntegrationTests} has it
 * on Spring MVC: off unless enabled (no bean of it, the application's own endpoints
 * untouched); enabled, it shows everything to everyone but refuses every write (403) and
 * warns at start; with {@code delayed-tasks.dashboard.writes-enabled} everyone may act,
 * the actions take effect and are audited, but only with the dashboard's header.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class DashboardWebFluxWithoutSecurityIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final String D = DashboardTestApplications.D;

	private static final String WORK = "work";

	private static final String FAILING = "fail-once";

	private static final String WARNING = "The delayed-tasks dashboard at /delayed-tasks runs without Spring Security";

	private final TestRedis redis;

	DashboardWebFluxWithoutSecurityIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void theDashboardIsOffByDefault(CapturedOutput output) throws Exception {
		try (ConfigurableApplicationContext context = start("off")) {
			assertThat(context.getBeanNamesForType(ReactiveDashboardController.class)).isEmpty();
			assertThat(context.getBeanNamesForType(DashboardApi.class)).isEmpty();
			assertThat(context.getBeanNamesForType(ReactiveDashboardAccess.class)).isEmpty();
			Http http = Http.anonymous(context);
			for (String path : List.of(D, D + "/", D + "/assets/dashboard.js", D + "/api/session", D + "/api/queues")) {
				assertThat(http.get(path).statusCode()).as(path).isEqualTo(404);
			}
			assertThat(http
				.send("POST", D + "/api/queue/pause" + Http.query("name", WORK), Map.of(DashboardApi.WRITE_HEADER, "1"))
				.statusCode()).isEqualTo(404);
			assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isFalse();
			assertThat(http.get("/hello").body()).isEqualTo("hello from the application");
		}
		assertThat(output).doesNotContain("runs without Spring Security");
	}

	@Test
	void enabledItShowsEverythingButRefusesEveryWriteAndWarns(CapturedOutput output) throws Exception {
		try (ConfigurableApplicationContext context = start("read-only", "--delayed-tasks.dashboard.enabled=true")) {
			assertThat(context.getBean(ReactiveDashboardAccess.class))
				.isEqualTo(new ReactiveDashboardAccess.Open(false));
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId later = scheduler.schedule(WORK, "later", Duration.ofHours(1));
			TaskId dead = scheduler.enqueue(FAILING, "fails once");
			awaitState(scheduler, FAILING, dead, TaskState.DEAD);
			Http http = Http.anonymous(context);
			assertThat(http.get(D).headers().firstValue("Location")).hasValue("delayed-tasks/");
			assertThat(http.get(D + "/").body()).contains("<script src=\"assets/dashboard.js\">");
			assertThat(http.get(D + "/assets/dashboard.js").headers().firstValue("Content-Type"))
				.hasValueSatisfying((type) -> assertThat(type).startsWith("text/javascript"));
			JsonNode session = Http.json(http.get(D + "/api/session"));
			assertThat(session.get("user").asString()).isEqualTo("anonymous");
			assertThat(session.get("canWrite").asBoolean()).isFalse();
			assertThat(session.get("csrf").isNull()).isTrue();
			assertThat(Http.json(http.get(D + "/api/queue" + Http.query("name", FAILING)))
				.get("deadLetters")
				.get(0)
				.get("id")
				.asString()).isEqualTo(dead.value());
			assertThat(Http.json(http.get(D + "/api/task" + Http.query("queue", WORK, "id", later.value())))
				.get("state")
				.asString()).isEqualTo("SCHEDULED");
			for (String write : writes(later, dead)) {
				HttpResponse<String> refused = http.write(D, write);
				assertThat(refused.statusCode()).as(write).isEqualTo(403);
				assertThat(Http.json(refused).get("message").asString()).as(write)
					.isEqualTo("Acting through the delayed-tasks dashboard needs writes enabled and the role "
							+ "DELAYED_TASKS_WRITE");
			}
			assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isFalse();
			assertThat(scheduler.find(WORK, later)).map(TaskInfo::state).hasValue(TaskState.SCHEDULED);
			assertThat(scheduler.find(FAILING, dead)).map(TaskInfo::state).hasValue(TaskState.DEAD);
		}
		assertThat(output.getOut().lines().filter((line) -> line.contains(WARNING))).singleElement()
			.satisfies((line) -> assertThat(line).contains(" WARN ")
				.endsWith("anyone who reaches it can see its queues and tasks (it is read-only)"));
		assertThat(output).doesNotContain("dev.delayedtasks.dashboard.audit");
	}

	@Test
	void withWritesEnabledEveryoneMayActWithTheDashboardsHeaderAndTheActionsTakeEffect(CapturedOutput output)
			throws Exception {
		try (ConfigurableApplicationContext context = start("writes", "--delayed-tasks.dashboard.enabled=true",
				"--delayed-tasks.dashboard.writes-enabled=true")) {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			QueueControl control = context.getBean(QueueControl.class);
			Handlers handlers = context.getBean(Handlers.class);
			TaskId toCancel = scheduler.schedule(WORK, "cancel me", Duration.ofHours(1));
			TaskId dead = scheduler.enqueue(FAILING, "fails once");
			awaitState(scheduler, FAILING, dead, TaskState.DEAD);
			Http http = Http.anonymous(context);
			assertThat(Http.json(http.get(D + "/api/session")).get("canWrite").asBoolean()).isTrue();
			for (String write : writes(toCancel, dead)) {
				HttpResponse<String> refused = http.post(write);
				assertThat(refused.statusCode()).as(write).isEqualTo(403);
				assertThat(Http.json(refused).get("message").asString()).as(write)
					.isEqualTo("A write through the delayed-tasks dashboard must carry the header "
							+ DashboardApi.WRITE_HEADER + ", as its page sends it");
			}
			assertThat(control.isPaused(WORK)).isFalse();
			assertThat(scheduler.find(WORK, toCancel)).map(TaskInfo::state).hasValue(TaskState.SCHEDULED);

			assertThat(http.write(D, D + "/api/queue/pause" + Http.query("name", WORK)).statusCode()).isEqualTo(200);
			assertThat(control.isPaused(WORK)).isTrue();
			assertThat(http.write(D, D + "/api/queue/resume" + Http.query("name", WORK)).statusCode()).isEqualTo(200);
			assertThat(control.isPaused(WORK)).isFalse();
			assertThat(http.write(D, D + "/api/task/cancel" + Http.query("queue", WORK, "id", toCancel.value()))
				.statusCode()).isEqualTo(200);
			assertThat(scheduler.find(WORK, toCancel)).isEmpty();
			assertThat(http.write(D, D + "/api/task/redrive" + Http.query("queue", FAILING, "id", dead.value()))
				.statusCode()).isEqualTo(200);
			await().atMost(WAIT).until(() -> handlers.runs(FAILING, dead).size() == 2);
			assertThat(http.write(D, D + "/api/queue/pause" + Http.query("name", "bad name")).statusCode())
				.isEqualTo(400);
		}
		assertThat(output.getOut().lines().filter((line) -> line.contains(WARNING))).singleElement()
			.satisfies((line) -> assertThat(line).contains(" WARN ")
				.endsWith("anyone who reaches it can pause queues and cancel, run and redrive tasks "
						+ "(delayed-tasks.dashboard.writes-enabled)"));
		assertThat(output).contains("user=anonymous action=pause queue=" + WORK + " task=- affected=1",
				"user=anonymous action=cancel queue=" + WORK + " task=" + toCancelOf(output),
				"user=anonymous action=redrive queue=" + FAILING);
	}

	private static String toCancelOf(CapturedOutput output) {
		return output.getOut()
			.lines()
			.filter((line) -> line.contains("action=cancel queue=" + WORK))
			.map((line) -> line.substring(line.indexOf("task=") + 5, line.indexOf(" affected")))
			.findFirst()
			.orElse("(none)");
	}

	private ConfigurableApplicationContext start(String keySuffix, String... args) {
		// Spring Security is on the test class path: hidden from this application.
		return DashboardWebFluxTestApplications.start(this.redis, keySuffix,
				new FilteredClassLoader("org.springframework.security."), new Class<?>[] { OpenReactive.class }, args);
	}

	private static List<String> writes(TaskId later, TaskId dead) {
		String group = Http.query("queue", FAILING, "reason", "non-retryable", "exceptionType",
				NonRetryableTaskException.class.getName());
		return List.of(D + "/api/queue/pause" + Http.query("name", WORK),
				D + "/api/queue/resume" + Http.query("name", WORK),
				D + "/api/task/cancel" + Http.query("queue", WORK, "id", later.value()),
				D + "/api/task/run" + Http.query("queue", WORK, "id", later.value()),
				D + "/api/task/redrive" + Http.query("queue", FAILING, "id", dead.value()),
				D + "/api/task/delete" + Http.query("queue", FAILING, "id", dead.value()),
				D + "/api/dead-letters/redrive" + group, D + "/api/dead-letters/delete" + group);
	}

	private static void awaitState(DelayedTaskScheduler scheduler, String queue, TaskId id, TaskState state) {
		await().atMost(WAIT).until(() -> scheduler.find(queue, id).map(TaskInfo::state).orElse(null) == state);
	}

}

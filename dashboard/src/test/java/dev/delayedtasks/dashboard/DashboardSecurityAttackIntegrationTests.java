package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.security.web.SecurityFilterChain;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Attacks on the dashboard's security in an application with Spring Boot's default
 * security only (users, no chain of its own): who may read, who may act, path and method
 * tricks, CSRF tokens and the dashboard's header, and that Spring Boot's default chain
 * stays and still guards the rest of the application.
 */
@WithRedis
class DashboardSecurityAttackIntegrationTests {

	private static final String D = DashboardTestApplications.D;

	private static final String READER = DashboardTestApplications.READER;

	private static final String WRITER = DashboardTestApplications.WRITER;

	private static final String OTHER = DashboardTestApplications.OTHER;

	private static final String PAUSE = D + "/api/queue/pause" + Http.query("name", "work");

	private static ConfigurableApplicationContext context;

	private static TaskId task;

	@BeforeAll
	static void start(TestRedis redis) {
		context = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class });
		task = context.getBean(DelayedTaskScheduler.class).schedule("work", "x", Duration.ofHours(1));
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void bootsDefaultChainStaysAndStillGuardsTheRestOfTheApplication() throws Exception {
		assertThat(context.getBeansOfType(SecurityFilterChain.class)).containsOnlyKeys("defaultSecurityFilterChain",
				DashboardAutoConfiguration.SECURITY_FILTER_CHAIN);
		assertThat(Http.anonymous(context).get("/hello").statusCode()).isEqualTo(401);
		HttpResponse<String> toLogIn = Http.anonymous(context).send("GET", "/hello", Map.of("Accept", "text/html"));
		assertThat(toLogIn.statusCode()).as("Spring Boot's login form").isEqualTo(302);
		assertThat(toLogIn.headers().firstValue("Location"))
			.hasValueSatisfying((location) -> assertThat(location).endsWith("/login"));
		assertThat(Http.anonymous(context).post("/hello").statusCode()).isIn(401, 403);
		assertThat(Http.anonymous(context).get("/nothing-here").statusCode()).isEqualTo(401);
		assertThat(Http.as(context, OTHER).get("/hello").statusCode()).isEqualTo(200);
		assertThat(Http.as(context, OTHER).get("/nothing-here").statusCode()).as("any user, nothing mapped")
			.isEqualTo(404);
		// Boot's default chain keeps CSRF on the application's own writes.
		HttpResponse<String> post = Http.as(context, OTHER).post("/hello");
		assertThat(post.statusCode()).isIn(401, 403);
		assertThat(post.body()).doesNotContain("posted to the application");
		assertThat(Http.as(context, OTHER).get(D + "/api/queues").statusCode()).isEqualTo(403);
		assertThat(Http.as(context, READER).get(D + "/api/queues").statusCode()).isEqualTo(200);
	}

	@Test
	void readsNeedTheReadOrTheWriteRole() throws Exception {
		for (String path : List.of(D + "/", D + "/api/session", D + "/api/queues",
				D + "/api/queue" + Http.query("name", "work"), D + "/api/queue/scheduled" + Http.query("name", "work"),
				D + "/api/queue/running" + Http.query("name", "work"),
				D + "/api/task" + Http.query("queue", "work", "id", task.value()), D + "/assets/dashboard.js")) {
			assertThat(Http.anonymous(context).get(path).statusCode()).as(path).isEqualTo(401);
			assertThat(Http.as(context, OTHER).get(path).statusCode()).as(path).isEqualTo(403);
			assertThat(Http.as(context, READER).get(path).statusCode()).as(path).isEqualTo(200);
			assertThat(Http.as(context, WRITER).get(path).statusCode()).as(path).isEqualTo(200);
		}
	}

	@Test
	void pathTricksLetNoAnonymousUserOrOtherUserRead() throws Exception {
		String work = Http.query("name", "work");
		List<String> tricks = List.of("/delayed-tasks/..;/delayed-tasks/api/queues", "//delayed-tasks/api/queues",
				"/DELAYED-TASKS/api/queues", "/Delayed-Tasks/api/queues",
				"/delayed-tasks/api/queue;jsessionid=1" + work, "/delayed-tasks;/api/queues",
				"/delayed-tasks/api/queues/", "/delayed-tasks/api/queues//", "/delayed-tasks%2Fapi%2Fqueues",
				"/delayed-tasks/api%2Fqueues", "/delayed-tasks/./api/queues", "/x/../delayed-tasks/api/queues",
				"/delayed-tasks/api/queue/%2e%2e/queues",
				"/delayed-tasks/api/task/" + Http.query("queue", "work", "id", task.value()),
				"/hello/../delayed-tasks/api/queues", "/delayed-tasks/api/queues.json", "/delayed-tasks/api/queues%00",
				"/delayed-tasks%20/api/queues", "/delayed-tasks/api/queue/scheduled/..%2F..%2Fqueues" + work,
				"/delayed-tasks/api/queues?x=1#y");
		for (String user : Arrays.asList(null, OTHER)) {
			for (String path : tricks) {
				Http http = Http.as(context, user);
				for (String method : List.of("GET", "HEAD", "OPTIONS", "TRACE")) {
					HttpResponse<String> response = http.send(method, path, Map.of());
					assertThat(response.statusCode()).as(user + " " + method + " " + path).isNotEqualTo(200);
					assertThat(response.body()).as(user + " " + method + " " + path)
						.doesNotContain("knownQueues", "\"scheduled\"", "\"entries\"");
				}
			}
		}
	}

	@Test
	void aReaderCannotActWhateverTheMethodOrPathEvenWithATokenAndTheHeader() throws Exception {
		Http reader = Http.as(context, READER);
		Map<String, String> pageHeaders = reader.pageHeaders(D);
		assertThat(pageHeaders).containsKeys("X-CSRF-TOKEN", DashboardController.WRITE_HEADER);
		String cancel = Http.query("queue", "work", "id", task.value());
		List<String> writes = List.of(PAUSE, D + "/api/queue/pause/" + Http.query("name", "work"),
				"/DELAYED-TASKS/api/queue/pause" + Http.query("name", "work"),
				D + "/api/queue/pause;x=1" + Http.query("name", "work"),
				"//delayed-tasks/api/queue/pause" + Http.query("name", "work"), D + "/api/task/cancel" + cancel,
				D + "/api/task/run" + cancel, D + "/api/task/cancel/" + cancel, D + "/api/task/delete" + cancel,
				D + "/api/dead-letters/delete" + Http.query("queue", "work", "reason", "x", "exceptionType", "y"));
		for (String path : writes) {
			for (String method : List.of("POST", "PUT", "DELETE", "PATCH", "GET", "HEAD")) {
				HttpResponse<String> response = reader.send(method, path, pageHeaders);
				assertThat(response.statusCode()).as(method + " " + path).isNotIn(200, 201, 204);
				HttpResponse<String> anonymous = Http.anonymous(context)
					.send(method, path, Map.of(DashboardController.WRITE_HEADER, "1"));
				assertThat(anonymous.statusCode()).as("anonymous " + method + " " + path).isNotIn(200, 201, 204);
			}
		}
		assertThat(context.getBean(QueueControl.class).isPaused("work")).isFalse();
		assertThat(context.getBean(DelayedTaskScheduler.class).find("work", task)).map(TaskInfo::state)
			.hasValue(TaskState.SCHEDULED);
		assertThat(Http.json(reader.get(D + "/api/session")).get("canWrite").asBoolean()).isFalse();
	}

	@Test
	void aWriterNeedsTheCsrfTokenAndTheHeaderToAct() throws Exception {
		QueueControl control = context.getBean(QueueControl.class);
		Http writer = Http.as(context, WRITER);
		Map<String, String> pageHeaders = writer.pageHeaders(D);
		String header = DashboardController.WRITE_HEADER;
		assertThat(writer.send("POST", PAUSE, Map.of(header, "1")).statusCode()).isEqualTo(403);
		assertThat(writer.send("POST", PAUSE, Map.of(header, "1", "X-CSRF-TOKEN", "forged")).statusCode())
			.isEqualTo(403);
		assertThat(writer.send("POST", PAUSE, Map.of("X-CSRF-TOKEN", pageHeaders.get("X-CSRF-TOKEN"))).statusCode())
			.as("the token without the header")
			.isEqualTo(403);
		assertThat(control.isPaused("work")).isFalse();
		// A token from another session is no token either.
		Map<String, String> othersHeaders = Http.as(context, WRITER).pageHeaders(D);
		assertThat(Http.as(context, WRITER).send("POST", PAUSE, othersHeaders).statusCode()).isEqualTo(403);
		assertThat(control.isPaused("work")).isFalse();
		assertThat(writer.send("POST", PAUSE, pageHeaders).statusCode()).isEqualTo(200);
		assertThat(control.isPaused("work")).isTrue();
		assertThat(writer.write(D, D + "/api/queue/resume" + Http.query("name", "work")).statusCode()).isEqualTo(200);
		assertThat(control.isPaused("work")).isFalse();
	}

	@Test
	void aWriterWithATokenCannotReachTheApplicationsOwnPathsThroughTheDashboardChain() throws Exception {
		Http writer = Http.as(context, WRITER);
		HttpResponse<String> hello = writer.send("POST", "/delayed-tasks/../hello", writer.pageHeaders(D));
		assertThat(hello.body()).doesNotContain("knownQueues");
	}

	/**
	 * The CSRF filter runs before HTTP Basic authenticates: the dashboard's chain answers
	 * the refusal itself (403 with a reason), rather than through {@code /error}, where
	 * Boot's default chain would turn it into a login challenge (a browser would show a
	 * login dialog to a writer whose token went stale).
	 */
	@Test
	void aWriteWithoutTheCsrfTokenIsRefusedWith403AndAReason() throws Exception {
		HttpResponse<String> refused = Http.as(context, WRITER)
			.send("POST", PAUSE, Map.of(DashboardController.WRITE_HEADER, "1"));
		assertThat(context.getBean(QueueControl.class).isPaused("work")).isFalse();
		assertThat(refused.statusCode()).as(refused.headers().map() + " " + refused.body()).isEqualTo(403);
		assertThat(refused.headers().firstValue("WWW-Authenticate")).isEmpty();
		assertThat(Http.json(refused).get("message").asString())
			.isEqualTo("Refused: the dashboard's writes need the role DELAYED_TASKS_WRITE and the page's CSRF token "
					+ "(reload the page)");
	}

}

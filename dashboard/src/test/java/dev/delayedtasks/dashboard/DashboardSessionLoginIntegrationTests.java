package dev.delayedtasks.dashboard;

import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application with a form login of its own, below a context path and behind a proxy
 * that adds a prefix: the dashboard accepts that session's login (the read role reads,
 * the write role acts with the page's token and header), the application's chain still
 * guards its own paths, the page's addresses are relative (and its assets name nothing
 * outside the application and build no HTML), and an id such as {@code ..} reaches the
 * API.
 */
@WithRedis
class DashboardSessionLoginIntegrationTests {

	private static final String APP = "/app";

	private static final String D = APP + DashboardTestApplications.D;

	private static final String PAUSE = D + "/api/queue/pause" + Http.query("name", "work");

	private static ConfigurableApplicationContext context;

	@BeforeAll
	static void start(TestRedis redis) {
		context = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class },
				"--test.application-chain=form-login", "--server.servlet.context-path=" + APP,
				"--server.forward-headers-strategy=framework");
		context.getBean(DelayedTaskScheduler.class).schedule(TaskRequest.of("work", "x").delay(Duration.ofHours(1)));
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void theApplicationsChainStillGuardsItsOwnPaths() throws Exception {
		HttpResponse<String> hello = Http.anonymous(context).get(APP + "/hello");
		assertThat(hello.statusCode()).isIn(302, 401);
		assertThat(hello.body()).doesNotContain("hello from the application");
	}

	@Test
	void anonymousIsAskedToLogIn() throws Exception {
		HttpResponse<String> queues = Http.anonymous(context).get(D + "/api/queues");
		assertThat(queues.statusCode()).isEqualTo(401);
		assertThat(queues.body()).doesNotContain("knownQueues");
	}

	@Test
	void aSessionLoginOfTheApplicationReadsWithTheReadRole() throws Exception {
		Http reader = Http.anonymous(context);
		reader.formLogin(APP, DashboardTestApplications.READER);
		assertThat(reader.get(APP + "/hello").statusCode()).isEqualTo(200);
		assertThat(reader.get(D + "/api/queues").statusCode()).isEqualTo(200);
		assertThat(reader.get(D + "/api/session").body()).contains("\"user\":\"reader\"", "\"canWrite\":false");
		HttpResponse<String> refused = reader.write(D, PAUSE);
		assertThat(refused.statusCode()).isEqualTo(403);
		assertThat(Http.json(refused).get("message").asString()).startsWith("Refused: ");
		assertThat(context.getBean(QueueControl.class).isPaused("work")).isFalse();
	}

	@Test
	void aSessionLoginWithoutTheRolesIsRefused() throws Exception {
		Http other = Http.anonymous(context);
		other.formLogin(APP, DashboardTestApplications.OTHER);
		assertThat(other.get(APP + "/hello").statusCode()).isEqualTo(200);
		assertThat(other.get(D + "/api/queues").statusCode()).isEqualTo(403);
		assertThat(other.get(D + "/").statusCode()).isEqualTo(403);
	}

	@Test
	void aSessionLoginWithTheWriteRoleActsWithTheTokenAndTheHeader() throws Exception {
		QueueControl control = context.getBean(QueueControl.class);
		Http writer = Http.anonymous(context);
		writer.formLogin(APP, DashboardTestApplications.WRITER);
		assertThat(writer.get(D + "/api/session").body()).contains("\"canWrite\":true");
		HttpResponse<String> withoutToken = writer.send("POST", PAUSE, Map.of(DashboardController.WRITE_HEADER, "1"));
		assertThat(withoutToken.statusCode()).isEqualTo(403);
		assertThat(Http.json(withoutToken).get("message").asString()).startsWith("Refused: ");
		assertThat(writer.send("POST", PAUSE, Map.of("X-CSRF-TOKEN", writer.csrfToken(D))).statusCode())
			.as("without the header")
			.isEqualTo(403);
		assertThat(control.isPaused("work")).isFalse();
		assertThat(writer.write(D, PAUSE).statusCode()).isEqualTo(200);
		assertThat(control.isPaused("work")).isTrue();
		assertThat(writer.write(D, D + "/api/queue/resume" + Http.query("name", "work")).statusCode()).isEqualTo(200);
		assertThat(control.isPaused("work")).isFalse();
	}

	@Test
	void belowAContextPathAndBehindAProxyTheSlashlessAddressRedirectsRelatively() throws Exception {
		Http reader = Http.as(context, DashboardTestApplications.READER);
		HttpResponse<String> redirect = reader.get(D);
		assertThat(redirect.statusCode()).isEqualTo(302);
		assertThat(redirect.headers().firstValue("Location")).hasValue("delayed-tasks/");
		HttpResponse<String> proxied = reader.send("GET", D, Map.of("X-Forwarded-Prefix", "/tasks-proxy",
				"X-Forwarded-Host", "ops.example.com", "X-Forwarded-Proto", "https"));
		assertThat(proxied.headers().firstValue("Location")).hasValue("delayed-tasks/");
		assertThat(reader.get(D + "/").body()).contains("src=\"assets/dashboard.js\"");
		assertThat(reader.get(D + "/assets/dashboard.js").statusCode()).isEqualTo(200);
		assertThat(reader.get(D + "/assets/dashboard.css").headers().firstValue("Content-Type"))
			.hasValue("text/css;charset=UTF-8");
		assertThat(reader.get(D + "/api/queues").statusCode()).isEqualTo(200);
	}

	/**
	 * '.' and '..' are valid task ids, which a URL path cannot carry (a browser and
	 * Tomcat resolve them as dot segments): ids travel as query parameters.
	 */
	@Test
	void aTaskWhoseIdIsDotsIsShownAndActedOn() throws Exception {
		DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
		scheduler.schedule(TaskRequest.of("work", "x").id("..").delay(Duration.ofHours(1)));
		scheduler.schedule(TaskRequest.of("work", "y").id(".").delay(Duration.ofHours(1)));
		Http writer = Http.as(context, DashboardTestApplications.WRITER);
		for (String id : List.of("..", ".")) {
			HttpResponse<String> task = writer.get(D + "/api/task" + Http.query("queue", "work", "id", id));
			assertThat(task.statusCode()).as(task.body()).isEqualTo(200);
			assertThat(Http.json(task).get("id").asString()).isEqualTo(id);
		}
		HttpResponse<String> cancel = writer.write(D, D + "/api/task/cancel" + Http.query("queue", "work", "id", ".."));
		assertThat(cancel.statusCode()).isEqualTo(200);
		assertThat(Http.json(cancel).get("taskId").asString()).isEqualTo("..");
		assertThat(scheduler.find("work", TaskId.of(".."))).isEmpty();
		assertThat(scheduler.find("work", TaskId.of("."))).isPresent();
	}

	@Test
	void theAssetsNameNothingOutsideTheApplicationAndBuildNoHtml() throws Exception {
		for (String name : List.of("index.html", "dashboard.js", "dashboard.css", "favicon.svg")) {
			String text = asset(name);
			String code = name.endsWith(".js") ? text.replaceAll("(?m)^\\s*//.*$", "") : text;
			// The SVG's xmlns is a name, not a request.
			code = code.replace("xmlns=\"http://www.w3.org/2000/svg\"", "").replace("'http://www.w3.org/2000/svg'", "");
			assertThat(code).as(name)
				.doesNotContainPattern("(?i)https?:")
				.doesNotContainPattern("(?i)(src|href|action)\\s*=\\s*[\"']?//")
				.doesNotContainPattern("(?i)url\\(\\s*[\"']?(https?:|//)")
				.doesNotContainPattern("(?i)@import");
			if (name.endsWith(".js")) {
				assertThat(code).as(name)
					.doesNotContain("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
							"new Function", "javascript:", "createContextualFragment", "DOMParser");
				// Every address it fetches is relative.
				Matcher fetches = Pattern.compile("(get|post|fetch)\\(\\s*'([^']*)'").matcher(code);
				int count = 0;
				while (fetches.find()) {
					assertThat(fetches.group(2)).as(name).doesNotStartWith("/").doesNotContain(":");
					count++;
				}
				assertThat(count).as("addresses found in " + name).isGreaterThan(5);
			}
		}
	}

	private static String asset(String name) throws Exception {
		try (InputStream in = new ClassPathResource("META-INF/delayed-tasks-dashboard/" + name).getInputStream()) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

}

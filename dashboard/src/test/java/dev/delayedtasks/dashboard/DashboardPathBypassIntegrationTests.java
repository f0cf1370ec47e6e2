package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Paths that Tomcat routes to the dashboard's controller but that the dashboard's chain
 * may not match, in an application whose own chain is lenient (public pages, a session
 * login, no CSRF protection): no path trick skips the dashboard's CSRF check, even with
 * the dashboard's header, and none lets an anonymous caller read.
 */
@WithRedis
class DashboardPathBypassIntegrationTests {

	private static ConfigurableApplicationContext context;

	@BeforeAll
	static void start(TestRedis redis) {
		context = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class },
				"--test.application-chain=lenient");
		context.getBean(DelayedTaskScheduler.class)
			.schedule(TaskRequest.of("work", "x").id("..").delay(Duration.ofHours(1)));
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void noPathTrickSkipsTheDashboardsCsrfCheck() throws Exception {
		QueueControl control = context.getBean(QueueControl.class);
		Http writer = Http.anonymous(context);
		writer.formLogin("", DashboardTestApplications.WRITER);
		String name = Http.query("name", "work");
		StringBuilder answers = new StringBuilder();
		for (String path : List.of("/delayed-tasks/api/queue/pause" + name,
				"/delayed-tasks/api/queue/x/../pause" + name, "/delayed-tasks/api/queue/x/%2E%2E/pause" + name,
				"/delayed-tasks/api/x/%2e%2e/queue/pause" + name, "/x/../delayed-tasks/api/queue/pause" + name,
				"/delayed-tasks/./api/queue/pause" + name, "/delayed-tasks/api/queue/pause/." + name,
				"/delayed-tasks/api/queue/pause;" + name, "/delayed-tasks;x=1/api/queue/pause" + name,
				"/delayed-tasks/api/queue/./pause" + name, "/delayed-tasks/api/queue/pause/" + name,
				"//delayed-tasks/api/queue/pause" + name, "/DELAYED-TASKS/api/queue/pause" + name)) {
			HttpResponse<String> response = writer.send("POST", path,
					Map.of("Origin", "https://evil.example", DashboardController.WRITE_HEADER, "1"));
			answers.append(path).append(" -> ").append(response.statusCode()).append('\n');
			assertThat(control.isPaused("work")).as(answers.toString()).isFalse();
		}
		// The same session with the page's token acts: the login above is real.
		assertThat(writer.write(DashboardTestApplications.D, "/delayed-tasks/api/queue/pause" + name).statusCode())
			.isEqualTo(200);
		assertThat(control.isPaused("work")).isTrue();
		control.resume("work");
	}

	@Test
	void noPathTrickLetsAnAnonymousCallerRead() throws Exception {
		String dots = Http.query("queue", "work", "id", "..");
		for (String path : List.of("/delayed-tasks/api/task" + dots, "/delayed-tasks/api/queue/%2E%2E?name=work",
				"/delayed-tasks/api/queue/x/..?name=work", "/x/../delayed-tasks/api/queues",
				"/delayed-tasks/./api/queues", "/delayed-tasks/api/x/../queues", "/delayed-tasks/api/x/%2e%2e/queues",
				"/delayed-tasks/api/task/.." + dots)) {
			HttpResponse<String> response = Http.anonymous(context).get(path);
			assertThat(response.statusCode()).as(path).isNotEqualTo(200);
			assertThat(response.body()).as(path + " -> " + response.statusCode())
				.doesNotContain("knownQueues", "\"scheduled\":", "\"state\"");
		}
		// The task is there, for those allowed to read it.
		Http reader = Http.as(context, DashboardTestApplications.READER);
		assertThat(Http.json(reader.get("/delayed-tasks/api/task" + dots)).get("id").asString()).isEqualTo("..");
		assertThat(context.getBean(DelayedTaskScheduler.class).find("work", TaskId.of(".."))).isPresent();
	}

}

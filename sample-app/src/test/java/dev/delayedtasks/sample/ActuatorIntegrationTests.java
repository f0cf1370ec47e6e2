package dev.delayedtasks.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample's Actuator surface over HTTP: the delayedtasks endpoint (read-only by
 * default, writes when access is unrestricted, 400 and 404 answers), the health details
 * and the Prometheus scrape.
 */
@WithRedis
class ActuatorIntegrationTests {

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void endpointReadsQueuesOneQueueAndOneTaskButNeverPayloads(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "read")) {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId id = scheduler.schedule(
					TaskRequest.of("reminders", new Reminder("ada", "secret-payload-text")).delay(Duration.ofHours(1)));
			HttpResponse<String> queues = get(context, "/actuator/delayedtasks");
			assertThat(queues.statusCode()).isEqualTo(200);
			assertThat(queues.body())
				.contains("\"name\":\"reminders\"", "\"scheduled\":1", "\"handlers\":[{\"id\":\"demoHandlers.remind\"")
				.doesNotContain("secret-payload-text");
			assertThat(get(context, "/actuator/delayedtasks/reminders").body()).contains("\"deadLetters\":[]");
			HttpResponse<String> task = get(context, "/actuator/delayedtasks/reminders/" + id);
			assertThat(task.statusCode()).isEqualTo(200);
			assertThat(task.body()).contains("\"state\":\"SCHEDULED\"").doesNotContain("secret-payload-text");
		}
	}

	@Test
	void endpointAnswers404ForUnknownAnd400ForInvalidNames(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "errors",
				"--management.endpoint.delayedtasks.access=unrestricted")) {
			assertThat(get(context, "/actuator/delayedtasks/no-such-queue").statusCode()).isEqualTo(404);
			assertThat(get(context, "/actuator/delayedtasks/reminders/no-such-task").statusCode()).isEqualTo(404);
			assertThat(post(context, "/actuator/delayedtasks/no-such-queue", "{\"action\":\"pause\"}").statusCode())
				.isEqualTo(404);
			assertThat(post(context, "/actuator/delayedtasks/reminders/no-such-task", "{\"action\":\"cancel\"}")
				.statusCode()).isEqualTo(404);
			HttpResponse<String> invalid = get(context, "/actuator/delayedtasks/bad%20name");
			assertThat(invalid.statusCode()).isEqualTo(400);
			assertThat(post(context, "/actuator/delayedtasks/reminders", "{\"action\":\"explode\"}").statusCode())
				.isEqualTo(400);
		}
	}

	@Test
	void writesAreDeniedWhileTheEndpointIsReadOnly(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "readonly")) {
			TaskId id = context.getBean(DelayedTaskScheduler.class)
				.schedule("reminders", new Reminder("ada", "x"), Duration.ofHours(1));
			assertThat(post(context, "/actuator/delayedtasks/reminders/" + id, "{\"action\":\"cancel\"}").statusCode())
				.isIn(404, 405);
			assertThat(delete(context, "/actuator/delayedtasks/reminders").statusCode()).isIn(404, 405);
			assertThat(context.getBean(DelayedTaskScheduler.class).find("reminders", id)).isPresent();
		}
	}

	@Test
	void writesPauseResumeCancelRedriveAndPurgeWhenAccessIsUnrestricted(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "write",
				"--management.endpoint.delayedtasks.access=unrestricted")) {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId later = scheduler.schedule("reminders", new Reminder("ada", "x"), Duration.ofHours(1));
			HttpResponse<String> cancel = post(context, "/actuator/delayedtasks/reminders/" + later,
					"{\"action\":\"cancel\"}");
			assertThat(cancel.statusCode()).isEqualTo(200);
			assertThat(cancel.body()).contains("\"affected\":1");
			assertThat(scheduler.find("reminders", later)).isEmpty();

			assertThat(post(context, "/actuator/delayedtasks/reminders", "{\"action\":\"pause\"}").statusCode())
				.isEqualTo(200);
			scheduler.schedule("reminders", new Reminder("linus", "while paused"), Duration.ofMillis(100));
			Thread.sleep(600);
			assertThat(get(context, "/actuator/delayedtasks/reminders").body()).contains("\"paused\":true",
					"\"ready\":1");
			assertThat(post(context, "/actuator/delayedtasks/reminders", "{\"action\":\"resume\"}").statusCode())
				.isEqualTo(200);
			DemoHandlers handlers = context.getBean(DemoHandlers.class);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> handlers.events().stream().anyMatch((event) -> event.startsWith("reminded linus")));

			TaskId doomed = scheduler.schedule(TaskRequest.of("doomed", new Reminder("nobody", "x")).maxAttempts(1));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> get(context, "/actuator/delayedtasks/doomed").body().contains(doomed.value()));
			assertThat(get(context, "/actuator/delayedtasks/doomed").body()).contains(
					"\"exceptionType\":\"java.lang.IllegalArgumentException\"",
					"\"message\":\"No mailbox for user nobody\"");
			HttpResponse<String> redrive = post(context, "/actuator/delayedtasks/doomed/" + doomed,
					"{\"action\":\"redrive\"}");
			assertThat(redrive.statusCode()).isEqualTo(200);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> get(context, "/actuator/delayedtasks/doomed").body().contains(doomed.value()));
			HttpResponse<String> purge = delete(context, "/actuator/delayedtasks/doomed");
			assertThat(purge.statusCode()).isEqualTo(200);
			assertThat(purge.body()).contains("\"action\":\"purge\"", "\"affected\":1");
			assertThat(get(context, "/actuator/delayedtasks/doomed").body()).contains("\"deadLetters\":[]");
		}
	}

	@Test
	void prometheusShowsLatenessAndCountsAfterTasksRanAndHealthShowsQueues(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "prometheus",
				"--delayed-tasks.snapshot-interval=200ms")) {
			context.getBean(DelayedTaskScheduler.class)
				.schedule("reminders", new Reminder("ada", "x"), Duration.ofMillis(200));
			DemoHandlers handlers = context.getBean(DemoHandlers.class);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> handlers.events().stream().anyMatch((event) -> event.startsWith("reminded ada")));
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				String scrape = get(context, "/actuator/prometheus").body();
				assertThat(scrape).contains("delayed_tasks_lateness_seconds_bucket{queue=\"reminders\"",
						"delayed_tasks_started_total{handler=\"demoHandlers.remind\",queue=\"reminders\"}",
						"delayed_tasks_succeeded_total{handler=\"demoHandlers.remind\",queue=\"reminders\"}",
						"delayed_tasks_scheduled_total{outcome=\"created\",queue=\"reminders\"}",
						"delayed_tasks_size{queue=\"reminders\",state=\"scheduled\"}",
						"delayed_tasks_run_seconds_count{");
			});
			String health = get(context, "/actuator/health").body();
			assertThat(health).contains("\"delayedTasks\"", "\"reminders\"", "\"timerOwner\"");
		}
	}

	private static ConfigurableApplicationContext start(TestRedis redis, String suffix, String... extra) {
		String[] args = Arrays.copyOf(extra, extra.length + 4);
		args[extra.length] = "--spring.data.redis.url=" + redis.url();
		args[extra.length + 1] = "--delayed-tasks.key-prefix=" + redis.keyPrefix() + "-" + suffix;
		args[extra.length + 2] = "--sample.demo-tasks=false";
		args[extra.length + 3] = "--server.port=0";
		return new SpringApplicationBuilder(SampleApplication.class).run(args);
	}

	private HttpResponse<String> get(ConfigurableApplicationContext context, String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(uri(context, path)).build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> post(ConfigurableApplicationContext context, String path, String json)
			throws Exception {
		return this.http.send(HttpRequest.newBuilder(uri(context, path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> delete(ConfigurableApplicationContext context, String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(uri(context, path)).DELETE().build(),
				HttpResponse.BodyHandlers.ofString());
	}

	private static URI uri(ConfigurableApplicationContext context, String path) {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		return URI.create("http://127.0.0.1:" + port + path);
	}

}

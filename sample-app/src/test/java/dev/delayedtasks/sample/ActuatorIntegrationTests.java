package dev.delayedtasks.sample;

import java.io.IOException;
import java.net.CookieManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * The sample's Actuator surface over HTTP: the delayedtasks endpoint (read-only by
 * default, writes when access is unrestricted, 400 and 404 answers), who may call what
 * (health and info open, reads for any user, writes for admins), the health details and
 * the Prometheus scrape; and the dashboard with the same logins (users look, admins act,
 * with a CSRF token).
 */
@WithRedis
class ActuatorIntegrationTests {

	private static final Login USER = new Login("user", "reader-secret");

	private static final Login ADMIN = new Login("admin", "admin-secret");

	/** The admin's password as an operator would configure it: hashed. */
	private static final String ADMIN_PASSWORD_HASH = PasswordEncoderFactories.createDelegatingPasswordEncoder()
		.encode(ADMIN.password());

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void healthAndInfoAreOpenButShowNoDetailsToAnonymousCallers(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "open")) {
			HttpResponse<String> health = get(context, null, "/actuator/health");
			assertThat(health.statusCode()).isEqualTo(200);
			assertThat(health.body()).contains("\"status\":\"UP\"")
				.doesNotContain("components", "redis", "delayedTasks");
			assertThat(get(context, null, "/actuator/info").statusCode()).isEqualTo(200);
			assertThat(get(context, USER, "/actuator/health").body()).contains("\"status\":\"UP\"", "\"redis\"",
					"\"delayedTasks\"");
		}
	}

	@Test
	void anonymousCallersAndWrongPasswordsAreAskedToLogIn(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "anonymous")) {
			for (String path : new String[] { "/actuator", "/actuator/delayedtasks", "/actuator/delayedtasks/reminders",
					"/actuator/prometheus", "/actuator/metrics" }) {
				HttpResponse<String> response = get(context, null, path);
				assertThat(response.statusCode()).as(path).isEqualTo(401);
				assertThat(response.headers().firstValue("WWW-Authenticate")).as(path)
					.hasValueSatisfying((value) -> assertThat(value).startsWith("Basic realm="));
			}
			HttpResponse<String> pause = post(context, null, "/actuator/delayedtasks/reminders",
					"{\"action\":\"pause\"}");
			assertThat(pause.statusCode()).isEqualTo(401);
			assertThat(pause.body()).as("Boot's error body, rendered by the open /error path")
				.contains("\"status\":401");
			assertThat(delete(context, null, "/actuator/delayedtasks/reminders").statusCode()).isEqualTo(401);
			assertThat(get(context, new Login("user", "wrong"), "/actuator/delayedtasks").statusCode()).isEqualTo(401);
			assertThat(get(context, new Login("admin", USER.password()), "/actuator/delayedtasks").statusCode())
				.isEqualTo(401);
			assertThat(isPaused(context)).isFalse();
		}
	}

	@Test
	void aUserReadsButEveryWriteIsForbidden(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "user")) {
			TaskId id = context.getBean(DelayedTaskScheduler.class)
				.schedule("reminders", new Reminder("ada", "x"), Duration.ofHours(1));
			assertThat(get(context, USER, "/actuator/delayedtasks").statusCode()).isEqualTo(200);
			assertThat(get(context, USER, "/actuator/delayedtasks/reminders/" + id).statusCode()).isEqualTo(200);
			assertThat(post(context, USER, "/actuator/delayedtasks/reminders", "{\"action\":\"pause\"}").statusCode())
				.isEqualTo(403);
			assertThat(post(context, USER, "/actuator/delayedtasks/reminders/" + id, "{\"action\":\"cancel\"}")
				.statusCode()).isEqualTo(403);
			assertThat(delete(context, USER, "/actuator/delayedtasks/reminders").statusCode()).isEqualTo(403);
			assertThat(isPaused(context)).isFalse();
			assertThat(context.getBean(DelayedTaskScheduler.class).find("reminders", id)).isPresent();
			assertThat(get(context, USER, "/actuator/recurringtasks").body()).contains("\"id\":\"minute-digest\"",
					"\"expression\":\"0 * * * * *\"", "\"zone\":\"Europe/Paris\"", "\"nextTick\"");
			assertThat(post(context, USER, "/actuator/recurringtasks/minute-digest", "{\"action\":\"pause\"}")
				.statusCode()).isEqualTo(403);
		}
	}

	@Test
	void anAdminWritesAndTheWriteTakesEffect(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "admin")) {
			HttpResponse<String> pause = post(context, ADMIN, "/actuator/delayedtasks/reminders",
					"{\"action\":\"pause\"}");
			assertThat(pause.statusCode()).isEqualTo(200);
			assertThat(pause.body()).contains("\"action\":\"pause\"");
			assertThat(isPaused(context)).isTrue();
			assertThat(get(context, USER, "/actuator/delayedtasks/reminders").body()).contains("\"paused\":true");
			assertThat(post(context, ADMIN, "/actuator/delayedtasks/reminders", "{\"action\":\"resume\"}").statusCode())
				.isEqualTo(200);
			assertThat(isPaused(context)).isFalse();
			HttpResponse<String> pauseDigest = post(context, ADMIN, "/actuator/recurringtasks/minute-digest",
					"{\"action\":\"pause\"}");
			assertThat(pauseDigest.statusCode()).isEqualTo(200);
			assertThat(pauseDigest.body()).contains("\"paused\":true");
			assertThat(post(context, ADMIN, "/actuator/recurringtasks/minute-digest", "{\"action\":\"resume\"}").body())
				.contains("\"paused\":false");
			assertThat(post(context, ADMIN, "/actuator/recurringtasks/no-such", "{\"action\":\"pause\"}").statusCode())
				.isEqualTo(404);
		}
	}

	@Test
	void theDashboardLetsUsersLookAndAdminsActWithTheSameLogins(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "dashboard")) {
			TaskId id = context.getBean(DelayedTaskScheduler.class)
				.schedule("reminders", new Reminder("ada", "x"), Duration.ofHours(1));
			assertThat(get(context, null, "/delayed-tasks/").statusCode()).isEqualTo(401);
			HttpResponse<String> page = get(context, USER, "/delayed-tasks/");
			assertThat(page.statusCode()).isEqualTo(200);
			assertThat(page.body()).contains("assets/dashboard.js");
			assertThat(get(context, USER, "/delayed-tasks/api/session").body()).contains("\"canWrite\":false");
			assertThat(get(context, USER, "/delayed-tasks/api/queues").body()).contains("\"name\":\"reminders\"");
			assertThat(get(context, USER, "/delayed-tasks/api/task?queue=reminders&id=" + id).body())
				.contains("\"state\":\"SCHEDULED\"");
			assertThat(send(request(context, USER, "/delayed-tasks/api/queue/pause?name=reminders")
				.header("X-Delayed-Tasks-Dashboard", "1")
				.POST(HttpRequest.BodyPublishers.noBody())).statusCode()).isEqualTo(403);
			// Writes carry the CSRF token of the admin's session, as the page sends them.
			HttpClient browser = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();
			String session = browser
				.send(request(context, ADMIN, "/delayed-tasks/api/session").build(),
						HttpResponse.BodyHandlers.ofString())
				.body();
			assertThat(session).contains("\"canWrite\":true");
			Matcher token = Pattern.compile("\"token\":\"([^\"]+)\"").matcher(session);
			assertThat(token.find()).isTrue();
			HttpRequest.Builder pause = request(context, ADMIN, "/delayed-tasks/api/queue/pause?name=reminders")
				.header("X-Delayed-Tasks-Dashboard", "1")
				.POST(HttpRequest.BodyPublishers.noBody());
			assertThat(browser.send(pause.build(), HttpResponse.BodyHandlers.ofString()).statusCode())
				.as("without the CSRF token")
				.isEqualTo(403);
			assertThat(isPaused(context)).isFalse();
			assertThat(browser
				.send(pause.header("X-CSRF-TOKEN", token.group(1)).build(), HttpResponse.BodyHandlers.ofString())
				.statusCode()).isEqualTo(200);
			assertThat(isPaused(context)).isTrue();
		}
	}

	@Test
	void aPasswordWithoutItsEncodingIdStopsStartupWithoutBeingShown(TestRedis redis) {
		assertThatException()
			.isThrownBy(() -> new SpringApplicationBuilder(SampleApplication.class).run(
					"--spring.data.redis.url=" + redis.url(), "--sample.demo-tasks=false", "--server.port=0",
					"--sample.security.admin-password=plain-secret"))
			.satisfies((ex) -> assertThat(NestedExceptionUtils.getMostSpecificCause(ex))
				.hasMessageStartingWith("sample.security.admin-password must be an encoded password")
				.hasMessageNotContaining("plain-secret"));
	}

	@Test
	void endpointReadsQueuesOneQueueAndOneTaskButNeverPayloads(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "read")) {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId id = scheduler.schedule(
					TaskRequest.of("reminders", new Reminder("ada", "secret-payload-text")).delay(Duration.ofHours(1)));
			HttpResponse<String> queues = get(context, USER, "/actuator/delayedtasks");
			assertThat(queues.statusCode()).isEqualTo(200);
			assertThat(queues.body())
				.contains("\"name\":\"reminders\"", "\"scheduled\":1", "\"handlers\":[{\"id\":\"demoHandlers.remind\"")
				.doesNotContain("secret-payload-text");
			assertThat(get(context, USER, "/actuator/delayedtasks/reminders").body()).contains("\"deadLetters\":[]");
			HttpResponse<String> task = get(context, USER, "/actuator/delayedtasks/reminders/" + id);
			assertThat(task.statusCode()).isEqualTo(200);
			assertThat(task.body()).contains("\"state\":\"SCHEDULED\"").doesNotContain("secret-payload-text");
		}
	}

	@Test
	void endpointShowsNoPayloadOrHeaderValueAndSkipsDeadSetMembersThatAreNoTaskIds(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "bad-data")) {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			// A payload the handler cannot read, with personal data in its values and
			// headers: dead-lettered at once as unreadable.
			TaskId unreadable = scheduler
				.schedule(TaskRequest.of("reminders", Map.of("user", Map.of("email", "dave@example.com"), "text", "x"))
					.header("authorization", "Bearer tok-SECRET-123"));
			DeadLetters deadLetters = context.getBean(DeadLetters.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> deadLetters.count("reminders") == 1);
			StringRedisTemplate template = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			template.opsForZSet()
				.add(PartitionKeys.of(redis.keyPrefix() + "-bad-data", "reminders").dead(), "evil}{x y", 9e15);
			HttpResponse<String> queue = get(context, USER, "/actuator/delayedtasks/reminders");
			assertThat(queue.statusCode()).isEqualTo(200);
			assertThat(queue.body())
				.contains("\"id\":\"" + unreadable + "\"", "\"reason\":\"unreadable-payload\"",
						"MismatchedInputException at $.user", "\"unreadableDeadLetters\":1")
				.doesNotContain("evil")
				.doesNotContain("dave@example.com")
				.doesNotContain("tok-SECRET-123");
			HttpResponse<String> task = get(context, USER, "/actuator/delayedtasks/reminders/" + unreadable);
			assertThat(task.statusCode()).isEqualTo(200);
			assertThat(task.body()).contains("\"state\":\"DEAD\"")
				.doesNotContain("dave@example.com")
				.doesNotContain("tok-SECRET-123");
		}
	}

	@Test
	void endpointAnswers404ForUnknownAnd400ForInvalidNames(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "errors")) {
			assertThat(get(context, USER, "/actuator/delayedtasks/no-such-queue").statusCode()).isEqualTo(404);
			assertThat(get(context, USER, "/actuator/delayedtasks/reminders/no-such-task").statusCode()).isEqualTo(404);
			assertThat(
					post(context, ADMIN, "/actuator/delayedtasks/no-such-queue", "{\"action\":\"pause\"}").statusCode())
				.isEqualTo(404);
			assertThat(post(context, ADMIN, "/actuator/delayedtasks/reminders/no-such-task", "{\"action\":\"cancel\"}")
				.statusCode()).isEqualTo(404);
			HttpResponse<String> invalid = get(context, USER, "/actuator/delayedtasks/bad%20name");
			assertThat(invalid.statusCode()).isEqualTo(400);
			assertThat(get(context, USER, "/actuator/delayedtasks/reminders/%7Bother%7D").statusCode()).isEqualTo(400);
			assertThat(
					post(context, ADMIN, "/actuator/delayedtasks/reminders", "{\"action\":\"explode\"}").statusCode())
				.isEqualTo(400);
		}
	}

	@Test
	void writesAreDeniedWhileTheEndpointIsReadOnly(TestRedis redis) throws Exception {
		// The library's default, which the sample's application.yml overrides.
		try (ConfigurableApplicationContext context = start(redis, "readonly",
				"--management.endpoint.delayedtasks.access=read-only")) {
			TaskId id = context.getBean(DelayedTaskScheduler.class)
				.schedule("reminders", new Reminder("ada", "x"), Duration.ofHours(1));
			assertThat(post(context, ADMIN, "/actuator/delayedtasks/reminders/" + id, "{\"action\":\"cancel\"}")
				.statusCode()).isIn(404, 405);
			assertThat(delete(context, ADMIN, "/actuator/delayedtasks/reminders").statusCode()).isIn(404, 405);
			assertThat(context.getBean(DelayedTaskScheduler.class).find("reminders", id)).isPresent();
		}
	}

	@Test
	void removeOverHttpIsForAdminsAnswers409WithTheReasonAnd200OnceTheQueueIsEmpty(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "remove")) {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			String queue = "per-user-42";
			TaskId waiting = scheduler.schedule(queue, new Reminder("ada", "x"), Duration.ofHours(1));
			String path = "/actuator/delayedtasks/" + queue;
			String remove = "{\"action\":\"remove\"}";
			assertThat(post(context, USER, path, remove).statusCode()).isEqualTo(403);
			HttpResponse<String> notEmpty = post(context, ADMIN, path, remove);
			assertThat(notEmpty.statusCode()).isEqualTo(409);
			assertThat(notEmpty.body()).contains("\"reason\":\"NOT_EMPTY\"", "\"scheduled\":1",
					"it is not empty (scheduled 1, ready 0, active 0, dead 0)");
			HttpResponse<String> handled = post(context, ADMIN, "/actuator/delayedtasks/reminders", remove);
			assertThat(handled.statusCode()).isEqualTo(409);
			assertThat(handled.body()).contains("\"reason\":\"HANDLED_HERE\"");
			assertThat(scheduler.cancel(queue, waiting)).isTrue();
			HttpResponse<String> removed = post(context, ADMIN, path, remove);
			assertThat(removed.statusCode()).isEqualTo(200);
			assertThat(removed.body()).contains("\"action\":\"remove\"", "\"affected\":1");
			assertThat(get(context, USER, path).statusCode()).isEqualTo(404);
			assertThat(post(context, ADMIN, path, remove).statusCode()).isEqualTo(404);
		}
	}

	@Test
	void writesPauseResumeCancelRedriveAndPurgeWhenAccessIsUnrestricted(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext context = start(redis, "write")) {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId later = scheduler.schedule("reminders", new Reminder("ada", "x"), Duration.ofHours(1));
			HttpResponse<String> cancel = post(context, ADMIN, "/actuator/delayedtasks/reminders/" + later,
					"{\"action\":\"cancel\"}");
			assertThat(cancel.statusCode()).isEqualTo(200);
			assertThat(cancel.body()).contains("\"affected\":1");
			assertThat(scheduler.find("reminders", later)).isEmpty();

			assertThat(post(context, ADMIN, "/actuator/delayedtasks/reminders", "{\"action\":\"pause\"}").statusCode())
				.isEqualTo(200);
			scheduler.schedule("reminders", new Reminder("linus", "while paused"), Duration.ofMillis(100));
			// Promoted while paused, and left ready.
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(get(context, USER, "/actuator/delayedtasks/reminders").body())
					.contains("\"paused\":true", "\"ready\":1"));
			assertThat(post(context, ADMIN, "/actuator/delayedtasks/reminders", "{\"action\":\"resume\"}").statusCode())
				.isEqualTo(200);
			DemoHandlers handlers = context.getBean(DemoHandlers.class);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> handlers.events().stream().anyMatch((event) -> event.startsWith("reminded linus")));

			TaskId doomed = scheduler.schedule(TaskRequest.of("doomed", new Reminder("nobody", "x")).maxAttempts(1));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> get(context, USER, "/actuator/delayedtasks/doomed").body().contains(doomed.value()));
			assertThat(get(context, USER, "/actuator/delayedtasks/doomed").body()).contains(
					"\"exceptionType\":\"java.lang.IllegalArgumentException\"",
					"\"message\":\"No mailbox for user nobody\"");
			assertThat(doomedRuns(handlers)).isEqualTo(1);
			HttpResponse<String> redrive = post(context, ADMIN, "/actuator/delayedtasks/doomed/" + doomed,
					"{\"action\":\"redrive\"}");
			assertThat(redrive.statusCode()).isEqualTo(200);
			assertThat(redrive.body()).contains("\"affected\":1");
			// Redriven, it runs again (and fails again) before it is back in the dead
			// letters.
			await().atMost(Duration.ofSeconds(10))
				.until(() -> doomedRuns(handlers) == 2
						&& get(context, USER, "/actuator/delayedtasks/doomed").body().contains(doomed.value()));
			HttpResponse<String> purge = delete(context, ADMIN, "/actuator/delayedtasks/doomed");
			assertThat(purge.statusCode()).isEqualTo(200);
			assertThat(purge.body()).contains("\"action\":\"purge\"", "\"affected\":1");
			assertThat(get(context, USER, "/actuator/delayedtasks/doomed").body()).contains("\"deadLetters\":[]");
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
				String scrape = get(context, USER, "/actuator/prometheus").body();
				assertThat(scrape).contains("delayed_tasks_lateness_seconds_bucket{queue=\"reminders\"",
						"delayed_tasks_started_total{handler=\"demoHandlers.remind\",queue=\"reminders\"}",
						"delayed_tasks_succeeded_total{handler=\"demoHandlers.remind\",queue=\"reminders\"}",
						"delayed_tasks_scheduled_total{outcome=\"created\",queue=\"reminders\"}",
						"delayed_tasks_size{queue=\"reminders\",state=\"scheduled\"}",
						"delayed_tasks_run_seconds_count{");
			});
			String health = get(context, USER, "/actuator/health").body();
			assertThat(health).contains("\"delayedTasks\"", "\"reminders\"", "\"timerOwner\"");
			// A task that fails for good, after one retry: every metric the Grafana
			// dashboard and the alert rules
			// in docs/ name is then in the scrape, by the name they use.
			context.getBean(DelayedTaskScheduler.class)
				.schedule(TaskRequest.of("doomed", new Reminder("nobody", "x")).maxAttempts(2));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> get(context, USER, "/actuator/delayedtasks/doomed").body().contains("\"dead\":1"));
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				String scrape = get(context, USER, "/actuator/prometheus").body();
				// A counter appears in the scrape from its first count on: one that
				// nothing here counts (stale
				// completions) must be a counter of the metrics reference, by its name
				// there.
				String reference = Files.readString(Path.of("..", "docs/monitoring.md"));
				assertThat(metricsNamedIn("docs/grafana/delayed-tasks-dashboard.json",
						"docs/prometheus/delayed-tasks-alerts.yml"))
					.hasSizeGreaterThan(8)
					.allSatisfy((
							name) -> assertThat(scrape.contains("\n" + name + "{") || scrape.contains("\n" + name + " ")
									|| (name.endsWith("_total") && reference.contains(
											"| `" + name.replace("_total", "").replace('_', '.') + "` | counter |")))
								.as(name)
								.isTrue());
			});
		}
	}

	private static Set<String> metricsNamedIn(String... files) throws IOException {
		Set<String> names = new TreeSet<>();
		for (String file : files) {
			Matcher name = Pattern.compile("delayed_tasks_[a-z_]+").matcher(Files.readString(Path.of("..", file)));
			while (name.find()) {
				names.add(name.group());
			}
		}
		return names;
	}

	private static ConfigurableApplicationContext start(TestRedis redis, String suffix, String... extra) {
		String[] args = Arrays.copyOf(extra, extra.length + 6);
		args[extra.length] = "--spring.data.redis.url=" + redis.url();
		args[extra.length + 1] = "--delayed-tasks.key-prefix=" + redis.keyPrefix() + "-" + suffix;
		args[extra.length + 2] = "--sample.demo-tasks=false";
		args[extra.length + 3] = "--server.port=0";
		args[extra.length + 4] = "--sample.security.user-password={noop}" + USER.password();
		args[extra.length + 5] = "--sample.security.admin-password=" + ADMIN_PASSWORD_HASH;
		return new SpringApplicationBuilder(SampleApplication.class).run(args);
	}

	private static long doomedRuns(DemoHandlers handlers) {
		return handlers.events().stream().filter((event) -> event.startsWith("doomed failed")).count();
	}

	private static boolean isPaused(ConfigurableApplicationContext context) {
		return context.getBean(QueueControl.class).isPaused("reminders");
	}

	private HttpResponse<String> get(ConfigurableApplicationContext context, @Nullable Login login, String path)
			throws Exception {
		return send(request(context, login, path));
	}

	private HttpResponse<String> post(ConfigurableApplicationContext context, @Nullable Login login, String path,
			String json) throws Exception {
		return send(request(context, login, path).header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json)));
	}

	private HttpResponse<String> delete(ConfigurableApplicationContext context, @Nullable Login login, String path)
			throws Exception {
		return send(request(context, login, path).DELETE());
	}

	private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static HttpRequest.Builder request(ConfigurableApplicationContext context, @Nullable Login login,
			String path) {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
		if (login != null) {
			String credentials = login.name() + ":" + login.password();
			request.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
		}
		return request;
	}

	/** Credentials for HTTP Basic; {@code null} where a test calls anonymously. */
	record Login(String name, String password) {
	}

}

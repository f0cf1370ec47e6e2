package dev.delayedtasks.dashboard;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.dashboard.DashboardTestApplications.AppEndpoint;
import dev.delayedtasks.dashboard.DashboardTestApplications.Handlers;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.test.web.servlet.request.MockMvcRequestBuilders;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard in a Spring MVC application without Spring Security on the class path, on
 * a real Redis: off unless enabled (no bean of it, the application's own endpoints
 * untouched); enabled, it shows everything to everyone but refuses every write (403) and
 * warns at start; with {@code delayed-tasks.dashboard.writes-enabled} everyone may act,
 * the actions take effect and are audited, but only with the dashboard's header, so a
 * form post from another site changes nothing.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class DashboardWithoutSecurityIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final String D = DashboardTestApplications.D;

	private static final String WORK = "work";

	private static final String FAILING = "fail-once";

	private static final String WARNING = "The delayed-tasks dashboard at /delayed-tasks runs without Spring Security";

	private static final JsonMapper json = JsonMapper.builder().build();

	private final TestRedis redis;

	DashboardWithoutSecurityIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	/**
	 * An application of its own, its keys under the class's prefix and a suffix.
	 */
	private WebApplicationContextRunner runner(String keySuffix) {
		return new WebApplicationContextRunner().withClassLoader(new FilteredClassLoader(SecurityFilterChain.class))
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					HttpMessageConvertersAutoConfiguration.class, DispatcherServletAutoConfiguration.class,
					WebMvcAutoConfiguration.class, DelayedTasksAutoConfiguration.class,
					DashboardAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + this.redis.url(),
					"delayed-tasks.key-prefix=" + this.redis.keyPrefix() + "-" + keySuffix,
					"delayed-tasks.worker.shutdown-timeout=1s")
			.withUserConfiguration(Handlers.class, AppEndpoint.class);
	}

	@Test
	void theDashboardIsOffByDefault(CapturedOutput output) {
		runner("off").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(DelayedTaskScheduler.class);
			assertThat(context).doesNotHaveBean(DashboardController.class)
				.doesNotHaveBean(DashboardReads.class)
				.doesNotHaveBean(DashboardAccess.class);
			MockMvc mvc = mvc(context);
			for (String path : List.of(D, D + "/", D + "/assets/dashboard.js", D + "/api/session", D + "/api/queues")) {
				assertThat(get(mvc, path).getResponse().getStatus()).as(path).isEqualTo(404);
			}
			assertThat(post(mvc, D + "/api/queue/pause?name=" + WORK, true).getResponse().getStatus()).isEqualTo(404);
			assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isFalse();
			assertThat(get(mvc, "/hello").getResponse().getContentAsString()).isEqualTo("hello from the application");
		});
		assertThat(output).doesNotContain("runs without Spring Security");
	}

	@Test
	void enabledItShowsEverythingButRefusesEveryWriteAndWarns(CapturedOutput output) {
		runner("read-only").withPropertyValues("delayed-tasks.dashboard.enabled=true").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(DashboardAccess.class)).isEqualTo(new DashboardAccess.Open(false));
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			Instant scheduledAt = Instant.now();
			TaskId later = scheduler.schedule(WORK, "later", Duration.ofHours(1));
			TaskId dead = scheduler.enqueue(FAILING, "fails once");
			awaitState(scheduler, FAILING, dead, TaskState.DEAD);
			MockMvc mvc = mvc(context);

			assertThat(get(mvc, D).getResponse().getRedirectedUrl()).isEqualTo("delayed-tasks/");
			MvcResult page = get(mvc, D + "/");
			assertThat(page.getResponse().getStatus()).isEqualTo(200);
			assertThat(page.getResponse().getContentAsString()).contains("<script src=\"assets/dashboard.js\">");
			MvcResult script = get(mvc, D + "/assets/dashboard.js");
			assertThat(script.getResponse().getStatus()).isEqualTo(200);
			assertThat(script.getResponse().getContentType()).startsWith("text/javascript");
			assertThat(get(mvc, D + "/assets/missing.js").getResponse().getStatus()).isEqualTo(404);
			JsonNode session = tree(get(mvc, D + "/api/session"));
			assertThat(session.get("user").asString()).isEqualTo("anonymous");
			assertThat(session.get("canWrite").asBoolean()).isFalse();
			assertThat(session.get("csrf").isNull()).isTrue();
			assertThat(session.get("writeHeader").asString()).isEqualTo(DashboardController.WRITE_HEADER);
			JsonNode overview = tree(get(mvc, D + "/api/queues"));
			assertThat(overview.get("queues")
				.valueStream()
				.map((view) -> view.get("queue").get("name").asString())
				.toList()).contains(WORK, FAILING);
			JsonNode failing = tree(get(mvc, D + "/api/queue?name=" + FAILING));
			assertThat(failing.get("view").get("queue").get("dead").asLong()).isEqualTo(1);
			assertThat(failing.get("deadLetters").get(0).get("id").asString()).isEqualTo(dead.value());
			JsonNode scheduled = tree(get(mvc, D + "/api/queue/scheduled?name=" + WORK));
			assertThat(scheduled.get("entries").get(0).get("id").asString()).isEqualTo(later.value());
			assertThat(get(mvc, D + "/api/queue/running?name=" + WORK).getResponse().getStatus()).isEqualTo(200);
			assertThat(tree(get(mvc, D + "/api/task?queue=" + WORK + "&id=" + later)).get("state").asString())
				.isEqualTo("SCHEDULED");

			for (String write : writes(later, dead)) {
				MvcResult refused = post(mvc, write, true);
				assertThat(refused.getResponse().getStatus()).as(write).isEqualTo(403);
				assertThat(tree(refused).get("message").asString()).as(write)
					.isEqualTo("Acting through the delayed-tasks dashboard needs writes enabled and the role "
							+ "DELAYED_TASKS_WRITE");
			}
			assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isFalse();
			assertThat(scheduler.find(WORK, later)).map(TaskInfo::dueAt)
				.hasValueSatisfying((due) -> assertThat(due).isAfter(scheduledAt.plus(Duration.ofMinutes(59))));
			assertThat(scheduler.find(FAILING, dead)).map(TaskInfo::state).hasValue(TaskState.DEAD);
		});
		assertThat(output.getOut().lines().filter((line) -> line.contains(WARNING))).singleElement()
			.satisfies((line) -> assertThat(line).contains(" WARN ")
				.endsWith("anyone who reaches it can see its queues and tasks (it is read-only)"));
		assertThat(output).doesNotContain("dev.delayedtasks.dashboard.audit");
	}

	@Test
	void withWritesEnabledEveryoneMayActWithTheDashboardsHeaderAndTheActionsTakeEffect(CapturedOutput output) {
		runner("writes")
			.withPropertyValues("delayed-tasks.dashboard.enabled=true", "delayed-tasks.dashboard.writes-enabled=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				QueueControl control = context.getBean(QueueControl.class);
				Handlers handlers = context.getBean(Handlers.class);
				TaskId toCancel = scheduler.schedule(WORK, "cancel me", Duration.ofHours(1));
				TaskId toRun = scheduler.schedule(WORK, "run me", Duration.ofHours(1));
				TaskId dead = scheduler.enqueue(FAILING, "fails once");
				awaitState(scheduler, FAILING, dead, TaskState.DEAD);
				MockMvc mvc = mvc(context);
				assertThat(tree(get(mvc, D + "/api/session")).get("canWrite").asBoolean()).isTrue();

				assertThat(post(mvc, D + "/api/queue/pause?name=" + WORK, true).getResponse().getStatus())
					.isEqualTo(200);
				assertThat(control.isPaused(WORK)).isTrue();
				assertThat(post(mvc, D + "/api/queue/resume?name=" + WORK, true).getResponse().getStatus())
					.isEqualTo(200);
				assertThat(control.isPaused(WORK)).isFalse();
				MvcResult cancel = post(mvc, D + "/api/task/cancel?queue=" + WORK + "&id=" + toCancel, true);
				assertThat(cancel.getResponse().getStatus()).isEqualTo(200);
				assertThat(tree(cancel).get("affected").asInt()).isEqualTo(1);
				assertThat(scheduler.find(WORK, toCancel)).isEmpty();
				assertThat(
						post(mvc, D + "/api/task/run?queue=" + WORK + "&id=" + toRun, true).getResponse().getStatus())
					.isEqualTo(200);
				await().atMost(WAIT).until(() -> handlers.ran(WORK).contains(toRun));
				assertThat(post(mvc, D + "/api/task/redrive?queue=" + FAILING + "&id=" + dead, true).getResponse()
					.getStatus()).isEqualTo(200);
				await().atMost(WAIT).until(() -> handlers.runs(FAILING, dead).size() == 2);
				await().atMost(WAIT).until(() -> scheduler.find(FAILING, dead).isEmpty());
				assertThat(post(mvc, D + "/api/queue/pause?name=never-seen", true).getResponse().getStatus())
					.isEqualTo(404);
				assertThat(post(mvc, D + "/api/queue/pause?name=bad%20name", true).getResponse().getStatus())
					.isEqualTo(400);
			});
		assertThat(output.getOut().lines().filter((line) -> line.contains(WARNING))).singleElement()
			.satisfies((line) -> assertThat(line).contains(" WARN ")
				.endsWith("anyone who reaches it can pause queues and cancel, run and redrive tasks "
						+ "(delayed-tasks.dashboard.writes-enabled)"));
		assertThat(output).contains("user=anonymous action=pause queue=" + WORK + " task=- affected=1",
				"user=anonymous action=cancel queue=" + WORK + " task=", "user=anonymous action=run queue=" + WORK,
				"user=anonymous action=redrive queue=" + FAILING);
	}

	/**
	 * An unsecured dashboard is to be put behind something that authenticates (a proxy
	 * with Basic or an SSO cookie): the browser then sends those credentials with any
	 * site's form post. A form cannot set the dashboard's header, so such a post, or any
	 * write without the header, changes nothing.
	 */
	@Test
	void withWritesEnabledACrossSiteFormPostOrAnyWriteWithoutTheHeaderChangesNothing(CapturedOutput output) {
		runner("cross-site")
			.withPropertyValues("delayed-tasks.dashboard.enabled=true", "delayed-tasks.dashboard.writes-enabled=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				TaskId later = scheduler.schedule(WORK, "later", Duration.ofHours(1));
				TaskId dead = scheduler.enqueue(FAILING, "fails once");
				awaitState(scheduler, FAILING, dead, TaskState.DEAD);
				long deadLetters = context.getBean(DeadLetters.class).count(FAILING);
				MockMvc mvc = mvc(context);
				MvcResult crossSite = mvc
					.perform(MockMvcRequestBuilders.post(D + "/api/queue/pause")
						.contentType("application/x-www-form-urlencoded")
						.content("name=" + WORK)
						.header("Origin", "https://evil.example")
						.header("Sec-Fetch-Site", "cross-site"))
					.andReturn();
				assertThat(crossSite.getResponse().getStatus()).isEqualTo(403);
				for (String write : writes(later, dead)) {
					MvcResult refused = post(mvc, write, false);
					assertThat(refused.getResponse().getStatus()).as(write).isEqualTo(403);
					assertThat(tree(refused).get("message").asString()).as(write)
						.isEqualTo("A write through the delayed-tasks dashboard must carry the header "
								+ DashboardController.WRITE_HEADER + ", as its page sends it");
				}
				assertThat(context.getBean(QueueControl.class).isPaused(WORK)).isFalse();
				assertThat(scheduler.find(WORK, later)).map(TaskInfo::state).hasValue(TaskState.SCHEDULED);
				assertThat(scheduler.find(FAILING, dead)).map(TaskInfo::state).hasValue(TaskState.DEAD);
				assertThat(context.getBean(DeadLetters.class).count(FAILING)).isEqualTo(deadLetters);
			});
		assertThat(output).doesNotContain("dev.delayedtasks.dashboard.audit");
	}

	/**
	 * Every kind of write on a scheduled task and a dead letter.
	 */
	private static List<String> writes(TaskId later, TaskId dead) {
		String group = "?queue=" + FAILING + "&reason=non-retryable&exceptionType="
				+ NonRetryableTaskException.class.getName();
		return List.of(D + "/api/queue/pause?name=" + WORK, D + "/api/queue/resume?name=" + WORK,
				D + "/api/task/cancel?queue=" + WORK + "&id=" + later,
				D + "/api/task/run?queue=" + WORK + "&id=" + later,
				D + "/api/task/redrive?queue=" + FAILING + "&id=" + dead,
				D + "/api/task/delete?queue=" + FAILING + "&id=" + dead, D + "/api/dead-letters/redrive" + group,
				D + "/api/dead-letters/delete" + group);
	}

	private static MockMvc mvc(AssertableWebApplicationContext context) {
		return MockMvcBuilders.webAppContextSetup(context).build();
	}

	private static MvcResult get(MockMvc mvc, String path) throws Exception {
		return mvc.perform(MockMvcRequestBuilders.get(path).accept("application/json", "text/html", "*/*")).andReturn();
	}

	private static MvcResult post(MockMvc mvc, String path, boolean withHeader) throws Exception {
		MockHttpServletRequestBuilder request = MockMvcRequestBuilders.post(path).accept("application/json");
		if (withHeader) {
			request.header(DashboardController.WRITE_HEADER, "1");
		}
		return mvc.perform(request).andReturn();
	}

	private static JsonNode tree(MvcResult result) throws Exception {
		return json.readTree(result.getResponse().getContentAsString());
	}

	private static void awaitState(DelayedTaskScheduler scheduler, String queue, TaskId id, TaskState state) {
		await().atMost(WAIT).until(() -> scheduler.find(queue, id).map(TaskInfo::state).orElse(null) == state);
	}

}

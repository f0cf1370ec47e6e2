package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.dashboard.DashboardWebFluxTestApplications.SecuredReactive;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis away ({@code CLIENT PAUSE} on a Redis of this class's own, longer than the
 * application's command timeout) while the WebFlux dashboard reads and acts, as
 * {@link DashboardRedisAwayIntegrationTests} has it on Spring MVC: the API answers 503
 * with a reason and no stack trace, a write that timed out after reaching Redis is
 * audited as tried, and requests that wait for Redis hold none of the server's event loop
 * threads.
 */
@WithRedis(privateServer = true)
@ExtendWith(OutputCaptureExtension.class)
class DashboardWebFluxRedisAwayIntegrationTests {

	private static final String D = DashboardTestApplications.D;

	private static ConfigurableApplicationContext context;

	private static RedisClient client;

	private static StatefulRedisConnection<String, String> admin;

	@BeforeAll
	static void start(TestRedis redis) {
		context = DashboardWebFluxTestApplications.start(redis, null, null, new Class<?>[] { SecuredReactive.class },
				"--spring.data.redis.timeout=500ms");
		context.getBean(DelayedTaskScheduler.class).schedule(TaskRequest.of("work", "x").delay(Duration.ofHours(1)));
		client = RedisClient.create(redis.uri());
		admin = client.connect();
	}

	@AfterAll
	static void stop() {
		admin.close();
		client.shutdown();
		context.close();
	}

	@Test
	void aReadWhileRedisIsAwayAnswers503WithAReasonAndNoStackTrace() throws Exception {
		Http reader = Http.as(context, DashboardTestApplications.READER);
		context.getBean(DashboardReads.class).forgetOverview();
		HttpResponse<String> overview;
		HttpResponse<String> queue;
		admin.sync().clientPause(2500);
		try {
			overview = reader.get(D + "/api/queues");
			queue = reader.get(D + "/api/queue?name=work");
		}
		finally {
			Thread.sleep(2600);
		}
		for (HttpResponse<String> away : List.of(overview, queue)) {
			assertThat(away.statusCode()).as(away.body()).isEqualTo(503);
			assertThat(away.body()).doesNotContain("\tat ", "at dev.delayedtasks", "at org.springframework");
			assertThat(Http.json(away).get("message").asString())
				.startsWith("Redis did not answer; try again shortly (");
		}
		assertThat(reader.get(D + "/api/queues").statusCode()).isEqualTo(200);
	}

	/**
	 * More reads wait for Redis at once than the server has event loop threads (at least
	 * four on Netty), each on a thread meant for blocking work: the server still answers
	 * at once.
	 */
	@Test
	void readsThatWaitForRedisHoldNoEventLoopThread() throws Exception {
		Http reader = Http.as(context, DashboardTestApplications.READER);
		int waiting = 2 * Math.max(4, Runtime.getRuntime().availableProcessors());
		ExecutorService callers = Executors.newFixedThreadPool(waiting);
		List<CompletableFuture<HttpResponse<String>>> reads = new ArrayList<>();
		assertThat(reader.get(D + "/api/queue?name=work").statusCode()).isEqualTo(200);
		admin.sync().clientPause(2000);
		try {
			for (int i = 0; i < waiting; i++) {
				reads.add(CompletableFuture.supplyAsync(() -> get(reader, D + "/api/queue?name=work"), callers));
			}
			// Until more reads wait for Redis than the server has event loop threads.
			await().atMost(Duration.ofSeconds(5))
				.pollInterval(Duration.ofMillis(5))
				.until(() -> threadsIn(DashboardApi.class).size() >= 8);
			assertThat(threadsIn(DashboardApi.class)).allMatch((thread) -> thread.startsWith("boundedElastic-"));
			long start = System.nanoTime();
			HttpResponse<String> anonymous = Http.anonymous(context).get(D);
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			assertThat(anonymous.statusCode()).isEqualTo(401);
			assertThat(took).as("an anonymous request, while reads wait for Redis").isLessThan(Duration.ofMillis(300));
			assertThat(reads).as("still waiting for Redis").anyMatch((read) -> !read.isDone());
		}
		finally {
			Thread.sleep(2100);
			callers.shutdown();
		}
		for (CompletableFuture<HttpResponse<String>> read : reads) {
			assertThat(read.get().statusCode()).isEqualTo(503);
		}
	}

	@Test
	void aWriteThatTimedOutIsAuditedAsTried(CapturedOutput output) throws Exception {
		Http writer = Http.as(context, DashboardTestApplications.WRITER);
		Map<String, String> pageHeaders = writer.pageHeaders(D);
		HttpResponse<String> pause;
		admin.sync().clientPause(1500);
		try {
			pause = writer.send("POST", D + "/api/queue/pause?name=work", pageHeaders);
		}
		finally {
			Thread.sleep(1600);
		}
		QueueControl control = context.getBean(QueueControl.class);
		try {
			assertThat(pause.statusCode()).as(pause.body()).isEqualTo(503);
			await().atMost(Duration.ofSeconds(5)).until(() -> control.isPaused("work"));
			assertThat(output.getOut().lines().filter((line) -> line.contains("user=writer action=pause queue=work")))
				.singleElement()
				.satisfies((line) -> assertThat(line).contains(" WARN ", "task=- affected=unknown error="));
		}
		finally {
			control.resume("work");
		}
	}

	private static List<String> threadsIn(Class<?> type) {
		return Thread.getAllStackTraces()
			.entrySet()
			.stream()
			.filter((thread) -> Arrays.stream(thread.getValue())
				.anyMatch((frame) -> frame.getClassName().equals(type.getName())))
			.map((thread) -> thread.getKey().getName())
			.toList();
	}

	private static HttpResponse<String> get(Http http, String path) {
		try {
			return http.get(path);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}

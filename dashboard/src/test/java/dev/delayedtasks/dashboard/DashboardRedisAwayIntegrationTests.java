package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
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
 * application's command timeout) while the dashboard reads and acts: the API answers 503
 * with a reason the page can show and no stack trace, and a write that timed out after
 * reaching Redis is audited as tried.
 */
@WithRedis(privateServer = true)
@ExtendWith(OutputCaptureExtension.class)
class DashboardRedisAwayIntegrationTests {

	private static final String D = DashboardTestApplications.D;

	private static ConfigurableApplicationContext context;

	private static RedisClient client;

	private static StatefulRedisConnection<String, String> admin;

	@BeforeAll
	static void start(TestRedis redis) {
		context = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class },
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
			// The pause ends by itself.
			Thread.sleep(2600);
		}
		for (HttpResponse<String> away : List.of(overview, queue)) {
			assertThat(away.statusCode()).as(away.body()).isEqualTo(503);
			assertThat(away.body()).doesNotContain("\tat ", "at dev.delayedtasks", "at org.springframework");
			assertThat(Http.json(away).get("message").asString())
				.startsWith("Redis did not answer; try again shortly (");
		}
		// Back.
		assertThat(reader.get(D + "/api/queues").statusCode()).isEqualTo(200);
	}

	/**
	 * A pause that timed out after reaching Redis: Redis applies it when the pause ends.
	 * The audit says it was tried, and how it failed.
	 */
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

}

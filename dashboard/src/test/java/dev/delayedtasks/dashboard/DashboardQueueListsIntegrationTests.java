package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.LeaseHolders;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.worker.HandlerContainerFactory;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A queue's ready and running lists through the dashboard's API on a real Redis: running
 * tasks name the instance that holds their lease (this one, reporting), a lease taken by
 * an instance that does not report names its tag as not reporting; ready tasks come in
 * the order claims take them, a cancelled one's stale hint as no longer ready; both need
 * the read role and a known queue.
 */
@WithRedis
class DashboardQueueListsIntegrationTests {

	private static final String D = DashboardTestApplications.D;

	private static final CountDownLatch release = new CountDownLatch(1);

	private static ConfigurableApplicationContext app;

	@BeforeAll
	static void start(TestRedis redis) {
		app = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class, Holding.class });
	}

	@AfterAll
	static void stop() {
		release.countDown();
		app.close();
	}

	@Test
	void runningTasksNameTheInstanceThatHoldsTheirLease() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		scheduler.schedule(TaskRequest.of("hold", "a").id(TaskId.of("held-1")));
		scheduler.schedule(TaskRequest.of("hold", "b").id(TaskId.of("held-2")));
		String here = app.getBean(HandlerContainerFactory.class).instanceId();
		Http reader = Http.as(app, DashboardTestApplications.READER);
		JsonNode running = await().atMost(Duration.ofSeconds(20))
			.until(() -> Http.json(reader.get(D + "/api/queue/running" + Http.query("name", "hold"))),
					(page) -> page.get("total").asLong() == 2 && page.get("entries")
						.valueStream()
						.allMatch((entry) -> entry.get("holderReporting").asBoolean()));
		for (JsonNode entry : running.get("entries")) {
			assertThat(entry.get("holder").asString()).isEqualTo(here);
			assertThat(entry.get("at").asString()).isNotBlank();
		}

		// A claim by an instance that never reported (one that crashed, say): its lease
		// names the tag its token carries.
		scheduler.schedule(TaskRequest.of("orphaned", "c").id(TaskId.of("orphan")));
		String gone = LeaseHolders.newInstanceId();
		ClaimBatch claimed = app.getBean(TaskStore.class).claim("orphaned", 1, LeaseHolders.loopNonce(gone, 1) + ".1");
		assertThat(claimed.tasks()).hasSize(1);
		JsonNode orphan = Http.json(reader.get(D + "/api/queue/running" + Http.query("name", "orphaned")))
			.get("entries")
			.get(0);
		assertThat(orphan.get("id").asString()).isEqualTo("orphan");
		assertThat(orphan.get("holder").asString()).isEqualTo(LeaseHolders.tagOfInstance(gone));
		assertThat(orphan.get("holderReporting").asBoolean()).isFalse();
	}

	@Test
	void readyTasksComeInClaimOrderAndAStaleHintShowsAsNoLongerReady() throws Exception {
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		// No handler runs this queue: its tasks stay ready.
		scheduler.schedule(TaskRequest.of("waiting", "1").id(TaskId.of("first")));
		scheduler.schedule(TaskRequest.of("waiting", "2").id(TaskId.of("urgent")).priority(3));
		scheduler.schedule(TaskRequest.of("waiting", "3").id(TaskId.of("dropped")));
		scheduler.cancel("waiting", TaskId.of("dropped"));
		Http reader = Http.as(app, DashboardTestApplications.READER);
		JsonNode ready = Http.json(reader.get(D + "/api/queue/ready" + Http.query("name", "waiting")));
		assertThat(ready.get("total").asLong()).isEqualTo(3);
		List<String> order = new ArrayList<>();
		List<Boolean> stillReady = new ArrayList<>();
		ready.get("entries").forEach((entry) -> {
			order.add(entry.get("id").asString());
			stillReady.add(entry.get("ready").asBoolean());
		});
		assertThat(order).containsExactly("urgent", "first", "dropped");
		assertThat(stillReady).containsExactly(true, true, false);
		JsonNode second = Http
			.json(reader.get(D + "/api/queue/ready" + Http.query("name", "waiting", "offset", "1", "limit", "1")));
		assertThat(second.get("entries").get(0).get("id").asString()).isEqualTo("first");

		assertThat(reader.get(D + "/api/queue/ready" + Http.query("name", "never-known")).statusCode()).isEqualTo(404);
		assertThat(reader.get(D + "/api/queue/ready" + Http.query("name", "waiting", "limit", "101")).statusCode())
			.isEqualTo(400);
		assertThat(Http.anonymous(app).get(D + "/api/queue/ready" + Http.query("name", "waiting")).statusCode())
			.isEqualTo(401);
		assertThat(Http.as(app, DashboardTestApplications.OTHER)
			.get(D + "/api/queue/running" + Http.query("name", "hold"))
			.statusCode()).isEqualTo(403);
	}

	@Test
	void oneCorruptTaskAmongTwentyLeavesTheRunningAndReadyPagesReadable() throws Exception {
		// Review: one task key that is not a hash (bad data) failed the whole page's
		// pipeline with WRONGTYPE, so the page answered 500.
		DelayedTaskScheduler scheduler = app.getBean(DelayedTaskScheduler.class);
		for (int i = 0; i < 20; i++) {
			scheduler.schedule(TaskRequest.of("corrupt-running", "r" + i).id(TaskId.of("run-" + i)));
			scheduler.schedule(TaskRequest.of("corrupt-ready", "w" + i).id(TaskId.of("wait-" + i)));
		}
		ClaimBatch claimed = app.getBean(TaskStore.class)
			.claim("corrupt-running", 20, LeaseHolders.loopNonce(LeaseHolders.newInstanceId(), 1) + ".1");
		assertThat(claimed.tasks()).hasSize(20);
		StringRedisTemplate redis = app.getBean(StringRedisTemplate.class);
		StoreSettings settings = app.getBean(StoreSettings.class);
		for (String[] bad : new String[][] { { "corrupt-running", "run-7" }, { "corrupt-ready", "wait-7" } }) {
			String key = settings.keys(bad[0]).task(bad[1]);
			redis.delete(key);
			redis.opsForValue().set(key, "not a hash");
		}
		Http reader = Http.as(app, DashboardTestApplications.READER);
		HttpResponse<String> running = reader.get(D + "/api/queue/running" + Http.query("name", "corrupt-running"));
		assertThat(running.statusCode()).as(running.body()).isEqualTo(200);
		JsonNode runningPage = Http.json(running);
		assertThat(runningPage.get("entries")).hasSize(20);
		assertThat(runningPage.get("entries").valueStream().filter((entry) -> entry.get("holder").isNull()).count())
			.as("only the corrupt task names no holder")
			.isEqualTo(1);
		HttpResponse<String> ready = reader.get(D + "/api/queue/ready" + Http.query("name", "corrupt-ready"));
		assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
		JsonNode readyPage = Http.json(ready);
		assertThat(readyPage.get("entries")).hasSize(20);
		assertThat(readyPage.get("entries").valueStream().filter((entry) -> !entry.get("ready").asBoolean()).count())
			.isEqualTo(1);
	}

	/** Its handler holds each task until the class ends. */
	@Configuration(proxyBeanMethods = false)
	static class Holding {

		@DelayedTaskHandler(queue = "hold", concurrency = "2")
		void hold(String payload, TaskContext context) throws InterruptedException {
			release.await(60, TimeUnit.SECONDS);
		}

	}

}

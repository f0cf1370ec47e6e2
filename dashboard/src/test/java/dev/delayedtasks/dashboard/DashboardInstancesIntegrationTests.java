package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.internal.worker.HandlerContainerFactory;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The instances page's API on a real Redis: two running applications are listed, each
 * with its handlers' queues, concurrency and the timer owner of each queue (exactly one);
 * one that stops gracefully leaves the list at once; reading it needs the read role.
 */
@WithRedis
class DashboardInstancesIntegrationTests {

	private static final String D = DashboardTestApplications.D;

	private static ConfigurableApplicationContext first;

	@BeforeAll
	static void start(TestRedis redis) {
		first = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class });
	}

	@AfterAll
	static void stop() {
		first.close();
	}

	@Test
	void runningInstancesAreListedWithTheirQueuesAndTimerOwnersAndAStoppedOneLeaves(TestRedis redis) throws Exception {
		Http reader = Http.as(first, DashboardTestApplications.READER);
		String firstId = first.getBean(HandlerContainerFactory.class).instanceId();
		String secondId;
		try (ConfigurableApplicationContext second = DashboardTestApplications.start(redis,
				new Class<?>[] { Secured.class })) {
			secondId = second.getBean(HandlerContainerFactory.class).instanceId();
			JsonNode listed = await().atMost(Duration.ofSeconds(20))
				.until(() -> Http.json(reader.get(D + "/api/instances")),
						(body) -> ids(body).size() == 2 && owners(body, "work").size() == 1 && allRunning(body));
			assertThat(ids(listed)).containsExactlyInAnyOrder(firstId, secondId);
			assertThat(listed.get("known").asInt()).isEqualTo(2);
			for (JsonNode instance : listed.get("instances")) {
				List<String> queues = new ArrayList<>();
				instance.get("handlers").forEach((handler) -> queues.add(handler.get("queue").asString()));
				assertThat(queues).contains("work", "fail-once", "doomed", "mend");
				assertThat(instance.get("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
			}
			assertThat(owners(listed, "work")).containsAnyOf(firstId, secondId);
		}
		JsonNode after = Http.json(reader.get(D + "/api/instances"));
		assertThat(ids(after)).containsExactly(firstId);
		HttpResponse<String> anonymous = Http.anonymous(first).get(D + "/api/instances");
		assertThat(anonymous.statusCode()).isEqualTo(401);
		assertThat(Http.as(first, DashboardTestApplications.OTHER).get(D + "/api/instances").statusCode())
			.isEqualTo(403);
	}

	private static List<String> ids(JsonNode body) {
		List<String> ids = new ArrayList<>();
		body.get("instances").forEach((instance) -> ids.add(instance.get("id").asString()));
		return ids;
	}

	private static List<String> owners(JsonNode body, String queue) {
		List<String> owners = new ArrayList<>();
		body.get("instances").forEach((instance) -> instance.get("handlers").forEach((handler) -> {
			if (handler.get("queue").asString().equals(queue) && handler.get("timerOwner").asBoolean()) {
				owners.add(instance.get("id").asString());
			}
		}));
		return owners;
	}

	// Every instance reports handlers, all running: the first report of an instance may
	// come before its handlers start.
	private static boolean allRunning(JsonNode body) {
		boolean all = true;
		for (JsonNode instance : body.get("instances")) {
			all &= !instance.get("handlers").isEmpty();
			for (JsonNode handler : instance.get("handlers")) {
				all &= handler.get("running").asBoolean();
			}
		}
		return all;
	}

}

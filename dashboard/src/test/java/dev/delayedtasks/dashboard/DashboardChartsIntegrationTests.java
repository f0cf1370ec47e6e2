package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Instant;

import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The charts and the overview's throughput, read from the history samples in Redis (as
 * {@code history.lua} writes them, here written by the test at known minutes): per minute
 * over the last hour, per hour over the last day, and tasks per minute over the last five
 * minutes in the queue list; an unknown queue has no charts.
 */
@WithRedis
class DashboardChartsIntegrationTests {

	private static final String D = DashboardTestApplications.D;

	private static ConfigurableApplicationContext context;

	@BeforeAll
	static void start(TestRedis redis) {
		context = DashboardTestApplications.start(redis, "charts", new Class<?>[] { Secured.class },
				"--delayed-tasks.dashboard.refresh-interval=1s", "--delayed-tasks.monitoring.history=false");
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void chartsAndThroughputComeFromTheHistoryInRedis() throws Exception {
		PartitionKeys keys = context.getBean(StoreSettings.class).keys("charted");
		StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
		redis.opsForSet().add(context.getBean(StoreSettings.class).keyPrefix() + ":queues", "charted");
		long minute = Instant.now().toEpochMilli() / 60_000;
		// 30 created, 24 succeeded, 6 failed (4 retried, 2 dead) in each of the last four
		// minutes.
		for (int i = 4; i >= 0; i--) {
			long n = 4 - i;
			sample(redis, keys.minutes(), minute - i, 30 * n, 24 * n, 4 * n, 2 * n);
		}
		long hour = Instant.now().toEpochMilli() / 3_600_000;
		sample(redis, keys.hours(), hour - 2, 0, 0, 0, 0);
		sample(redis, keys.hours(), hour - 1, 600, 500, 60, 20);

		HttpResponse<String> charts = Http.as(context, DashboardTestApplications.READER)
			.get(D + "/api/queue/charts" + Http.query("name", "charted"));
		assertThat(charts.statusCode()).isEqualTo(200);
		JsonNode body = Http.json(charts);
		assertThat(body.get("lastHour")).hasSize(4).allSatisfy((period) -> {
			assertThat(period.get("created").asDouble()).isEqualTo(30);
			assertThat(period.get("succeeded").asDouble()).isEqualTo(24);
			assertThat(period.get("failed").asDouble()).isEqualTo(6);
			assertThat(period.get("deadLettered").asDouble()).isEqualTo(2);
		});
		assertThat(body.get("lastDay")).singleElement().satisfies((period) -> {
			assertThat(period.get("created").asDouble()).isEqualTo(600);
			assertThat(period.get("failed").asDouble()).isEqualTo(80);
		});
		JsonNode overview = Http.json(Http.as(context, DashboardTestApplications.READER).get(D + "/api/queues"));
		JsonNode row = null;
		for (JsonNode queue : overview.get("queues")) {
			if (queue.get("queue").get("name").asString().equals("charted")) {
				row = queue;
			}
		}
		assertThat(row).isNotNull();
		// Four minutes of 30 within the five-minute span.
		assertThat(row.get("throughput").get("created").asDouble()).isEqualTo(4 * 30 / 5.0);
		assertThat(row.get("throughput").get("failed").asDouble()).isEqualTo(4 * 6 / 5.0);
		assertThat(Http.as(context, DashboardTestApplications.READER)
			.get(D + "/api/queue/charts" + Http.query("name", "never-seen"))
			.statusCode()).isEqualTo(404);
	}

	private static void sample(StringRedisTemplate redis, String key, long period, long created, long succeeded,
			long retried, long dead) {
		redis.opsForZSet().add(key, period + ":" + created + ":" + succeeded + ":" + retried + ":" + dead, period);
	}

}

package dev.delayedtasks.dashboard;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis work per view, counted on a Redis of this class's own (INFO commandstats and
 * SLOWLOG) with no worker running: concurrent requests for the overview read Redis once,
 * pages are bounded, a queue's page reads the queue once, and a million scheduled tasks
 * slow no view.
 */
@WithRedis(privateServer = true)
class DashboardLoadIntegrationTests {

	private static final String D = DashboardTestApplications.D;

	private static final String READER = DashboardTestApplications.READER;

	private static ConfigurableApplicationContext context;

	private static StringRedisTemplate redis;

	private static String prefix;

	private static RedisClient client;

	private static StatefulRedisConnection<String, String> lettuce;

	@BeforeAll
	static void start(TestRedis testRedis) {
		prefix = testRedis.keyPrefix();
		context = DashboardTestApplications.start(testRedis, new Class<?>[] { Secured.class },
				"--delayed-tasks.dashboard.refresh-interval=1h", "--delayed-tasks.worker.enabled=false");
		redis = context.getBean(StringRedisTemplate.class);
		DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
		for (String queue : List.of("a", "b", "c")) {
			scheduler.schedule(TaskRequest.of(queue, "x").delay(Duration.ofHours(1)));
		}
		client = RedisClient.create(testRedis.uri());
		lettuce = client.connect();
	}

	@AfterAll
	static void stop() {
		lettuce.close();
		client.shutdown();
		context.close();
	}

	@Test
	void manyConcurrentRequestsForTheOverviewReadRedisOnce() throws Exception {
		Http reader = Http.as(context, READER);
		int queues = Http.json(reader.get(D + "/api/queues")).get("queues").size();
		context.getBean(DashboardReads.class).forgetOverview();
		long baseline = calls("zcount");
		int threads = 32;
		CyclicBarrier barrier = new CyclicBarrier(threads);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<Integer>> answers = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				Http http = Http.as(context, READER);
				answers.add(pool.submit(() -> {
					barrier.await();
					return http.get(D + "/api/queues").statusCode();
				}));
			}
			for (Future<Integer> answer : answers) {
				assertThat(answer.get()).isEqualTo(200);
			}
		}
		finally {
			pool.shutdownNow();
		}
		long overviews = (calls("zcount") - baseline) / (3L * queues);
		assertThat(overviews).as("overview reads of Redis for " + threads + " concurrent requests").isEqualTo(1);
	}

	@Test
	void pagesAreBoundedAndBadBoundsAreAClear400() throws Exception {
		Http reader = Http.as(context, READER);
		for (String query : List.of("limit=101", "limit=0", "limit=-1", "offset=-1", "limit=100000000000",
				"offset=99999999999999999999", "limit=abc", "offset=1e3")) {
			for (String view : List.of("scheduled", "running")) {
				HttpResponse<String> response = reader.get(D + "/api/queue/" + view + "?name=a&" + query);
				assertThat(response.statusCode()).as(view + "?" + query + " " + response.body()).isEqualTo(400);
				assertThat(response.body()).as(view + "?" + query).doesNotContain("\tat ", "Exception");
			}
		}
		assertThat(Http.json(reader.get(D + "/api/queue/scheduled?name=a&limit=101")).get("message").asString())
			.isEqualTo("A page starts at 0 or later and holds 1 to 100 entries: 0, 101");
		HttpResponse<String> far = reader
			.get(D + "/api/queue/scheduled?name=a&offset=" + Long.MAX_VALUE + "&limit=100");
		assertThat(far.statusCode()).as(far.body()).isIn(200, 400);
		if (far.statusCode() == 200) {
			assertThat(far.body()).contains("\"entries\":[]");
		}
		assertThat(reader.get(D + "/api/queue/scheduled?name=a&limit=100").statusCode()).isEqualTo(200);
		assertThat(reader.get(D + "/api/queue/scheduled?name=never-known").statusCode()).isEqualTo(404);
	}

	/**
	 * The page of a queue makes three calls (the queue, its scheduled and its running
	 * tasks): the queue's counts are read once, and each list checks the queue with one
	 * {@code SISMEMBER} before its {@code ZRANGE} and {@code ZCARD}.
	 */
	@Test
	void aQueuePageReadsTheQueueOnce() throws Exception {
		Http reader = Http.as(context, READER);
		reader.get(D + "/api/session");
		Map<String, Long> before = commandCalls();
		assertThat(reader.get(D + "/api/queue?name=a").statusCode()).isEqualTo(200);
		Map<String, Long> afterQueue = commandCalls();
		assertThat(reader.get(D + "/api/queue/scheduled?name=a&limit=20").statusCode()).isEqualTo(200);
		assertThat(reader.get(D + "/api/queue/running?name=a&limit=20").statusCode()).isEqualTo(200);
		Map<String, Long> afterLists = commandCalls();
		Map<String, Long> queue = delta(before, afterQueue);
		Map<String, Long> lists = delta(afterQueue, afterLists);
		assertThat(queue.getOrDefault("zcount", 0L)).as("the load due next, once: " + queue).isEqualTo(3);
		assertThat(lists).as("the two lists").containsOnlyKeys("sismember", "zrange", "zcard");
		assertThat(lists).containsEntry("sismember", 2L).containsEntry("zrange", 2L).containsEntry("zcard", 2L);
	}

	@Test
	void aMillionScheduledTasksDoNotSlowAView() throws Exception {
		String sched = PartitionKeys.of(prefix, "big").sched();
		context.getBean(DelayedTaskScheduler.class).schedule(TaskRequest.of("big", "x").delay(Duration.ofHours(1)));
		long from = Instant.now().plus(Duration.ofDays(2)).toEpochMilli();
		// Written by this test's own connection, which may wait for Redis longer.
		lettuce.sync()
			.eval("for i = 1, 1000000 do redis.call('ZADD', KEYS[1], ARGV[1] + i, 'big-' .. i) end return 1",
					ScriptOutputType.INTEGER, new String[] { sched }, String.valueOf(from));
		assertThat(redis.opsForZSet().zCard(sched)).isEqualTo(1_000_001L);
		lettuce.sync().slowlogReset();
		Http reader = Http.as(context, READER);
		context.getBean(DashboardReads.class).forgetOverview();
		for (String path : List.of("/api/queues", "/api/queue?name=big", "/api/queue/scheduled?name=big&limit=100",
				"/api/queue/scheduled?name=big&offset=999950&limit=100", "/api/queue/running?name=big&limit=100")) {
			long started = System.nanoTime();
			HttpResponse<String> response = reader.get(D + path);
			long millis = (System.nanoTime() - started) / 1_000_000;
			assertThat(response.statusCode()).as(path).isEqualTo(200);
			assertThat(millis).as(path + " took " + millis + " ms").isLessThan(1000);
		}
		assertThat(reader.get(D + "/api/queue/scheduled?name=big&offset=999950&limit=100").body())
			.contains("\"total\":1000001", "big-1000000");
		assertThat(lettuce.sync().slowlogGet()).as("commands over 10 ms while the views were read").isEmpty();
	}

	private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
		Map<String, Long> delta = new HashMap<>();
		after.forEach((command, calls) -> {
			long more = calls - before.getOrDefault(command, 0L);
			if (more > 0 && !command.equals("info")) {
				delta.put(command, more);
			}
		});
		return delta;
	}

	private static Map<String, Long> commandCalls() {
		Properties stats = redis
			.execute((RedisCallback<Properties>) (RedisConnection connection) -> connection.serverCommands()
				.info("commandstats"));
		Map<String, Long> calls = new HashMap<>();
		stats.stringPropertyNames()
			.stream()
			.filter((name) -> name.startsWith("cmdstat_"))
			.forEach((name) -> calls.put(name.substring("cmdstat_".length()),
					Long.parseLong(stats.getProperty(name).replaceAll("^calls=(\\d+),.*$", "$1"))));
		return calls;
	}

	private static long calls(String command) {
		return commandCalls().getOrDefault(command, 0L);
	}

}

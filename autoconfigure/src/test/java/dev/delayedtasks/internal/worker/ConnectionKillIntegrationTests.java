package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.internal.store.StoreInvariantChecks;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Under load, the dispatcher's and the timer's blocking connections are killed with
 * {@code CLIENT KILL} and the script cache is emptied with {@code SCRIPT FLUSH}, again
 * and again: every task still runs exactly once and on time.
 */
@WithRedis(privateServer = true)
class ConnectionKillIntegrationTests {

	private static final String QUEUE = "client-kill";

	private static final Duration LOAD = Duration.ofSeconds(6);

	private static final Duration CHAOS_INTERVAL = Duration.ofMillis(400);

	/**
	 * The least the producer schedules in {@link #LOAD}: a quarter of what it does on an
	 * idle 2-core machine, so only a stall (or a producer that died) falls below it.
	 */
	private static final int MIN_TASKS = 200;

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	ConnectionKillIntegrationTests(TestRedis redis) {
		this.redis = redis;
		// A dispatcher blocks 5 s: a task that waited for a block timeout would be
		// seconds late.
		this.runner = ShortLeases
			.runner(redis, "spring.data.redis.timeout=500ms", "delayed-tasks.worker.block-timeout=5s")
			.withUserConfiguration(JobRuns.class)
			.withPropertyValues("test.queue=" + QUEUE);
	}

	@Test
	void killedBlockingConnectionsAndAFlushedScriptCacheLoseAndDelayNothing() throws Exception {
		RedisClient client = RedisClient.create(this.redis.uri());
		try (StatefulRedisConnection<String, String> admin = client.connect()) {
			RedisCommands<String, String> commands = admin.sync();
			this.runner.run((context) -> {
				JobRuns handlers = context.getBean(JobRuns.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				List<String> scheduled = new CopyOnWriteArrayList<>();
				List<Throwable> failedCalls = new CopyOnWriteArrayList<>();
				Thread producer = new Thread(() -> {
					long end = System.nanoTime() + LOAD.toNanos();
					for (int i = 0; System.nanoTime() < end; i++) {
						String name = "job-" + i;
						try {
							scheduler.schedule(QUEUE, new JobRuns.Job(name),
									Duration.ofMillis(ThreadLocalRandom.current().nextInt(500)));
							scheduled.add(name);
						}
						catch (RuntimeException ex) {
							// Counted, not the end of the load: the producer runs on.
							failedCalls.add(ex);
						}
						sleep(5);
					}
				}, "client-kill-producer");
				producer.start();
				int killed = 0;
				int flushes = 0;
				int rounds = 0;
				long end = System.nanoTime() + LOAD.toNanos();
				while (System.nanoTime() < end) {
					sleep(CHAOS_INTERVAL.toMillis());
					for (String id : blockingClientIds(commands.clientList())) {
						killed += commands.clientKill(KillArgs.Builder.id(Long.parseLong(id))).intValue();
					}
					if (++rounds % 2 == 0) {
						commands.scriptFlush();
						flushes++;
					}
				}
				producer.join();
				await().atMost(Duration.ofSeconds(20))
					.until(() -> scheduled.stream().allMatch((name) -> handlers.runs(name) >= 1));
				// Longer than lease + grace: a lost ack would show up as a second run.
				ShortLeases.assertNoFurtherRun(() -> assertThat(scheduled)
					.allSatisfy((name) -> assertThat(handlers.runs(name)).as(name).isEqualTo(1)));
				List<Long> sorted = handlers.latenessMillis();
				long maxLateness = sorted.get(sorted.size() - 1);
				long p99 = sorted.get((int) Math.ceil(sorted.size() * 0.99) - 1);
				System.out.println("client-kill tasks=" + scheduled.size() + " failed_calls=" + failedCalls.size()
						+ " blocking_connections_killed=" + killed + " script_flushes=" + flushes + " lateness_p99_ms="
						+ p99 + " lateness_max_ms=" + maxLateness);
				assertThat(failedCalls).as("failed schedule calls").isEmpty();
				// One call every 5 ms or so for 6 s: far fewer means the producer
				// stalled.
				assertThat(scheduled).as("tasks scheduled").hasSizeGreaterThanOrEqualTo(MIN_TASKS);
				assertThat(killed).as("blocking connections killed").isGreaterThanOrEqualTo(5);
				assertThat(flushes).as("script flushes").isGreaterThanOrEqualTo(3);
				assertThat(scheduled).allSatisfy((name) -> assertThat(handlers.runs(name)).as(name).isEqualTo(1));
				assertThat(maxLateness).as("no task waited for a dispatcher's block timeout").isLessThan(1000);
				assertThat(StoreInvariantChecks.violations(context.getBean(StringRedisTemplate.class),
						this.redis.keyPrefix(), QUEUE))
					.isEmpty();
			});
		}
		finally {
			client.shutdown();
		}
	}

	/** Clients blocked in a list pop: the dispatchers' and the timers' connections. */
	private static List<String> blockingClientIds(String clientList) {
		List<String> ids = new ArrayList<>();
		for (String line : clientList.split("\n")) {
			if (line.contains(" cmd=blpop") || line.contains(" cmd=brpop") || line.contains(" cmd=blmove")
					|| line.contains(" cmd=blmpop")) {
				ids.add(line.substring(line.indexOf("id=") + 3, line.indexOf(' ', line.indexOf("id="))));
			}
		}
		return ids;
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}

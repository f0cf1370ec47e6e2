package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Stopping a handler while Redis is unresponsive ({@code CLIENT PAUSE}): the stop ends
 * within its shutdown timeout, a claim it gave up on never runs its tasks on the stopped
 * container but releases them as soon as Redis answers, and repeated stalls with restarts
 * leave the queue its whole concurrency.
 */
@WithRedis(privateServer = true)
class StopDuringRedisStallIntegrationTests {

	private static final String QUEUE = "stall-restart";

	private static final int CONCURRENCY = 2;

	private static final int CYCLES = 2;

	private static final Duration PAUSE = Duration.ofSeconds(6);

	/** Closed latches per round; a redelivered task of an ended round runs through. */
	private static final String STOPPED = "stall-stop";

	private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(1);

	private static final String INTERRUPTED = "stall-interrupt";

	private static final String STUCK = "stall-stuck";

	/** The payloads whose handlers started. */
	private static final Set<String> RAN_PAYLOADS = ConcurrentHashMap.newKeySet();

	/** Longer than any stop may take, so the claim it gave up on answers after it. */
	private static final Duration LONG_PAUSE = Duration.ofSeconds(12);

	/** The ids of the tasks whose handlers started. */
	private static final Set<String> RAN_IDS = ConcurrentHashMap.newKeySet();

	/** Tasks whose handlers started after their container's stop returned. */
	private static final Set<String> STARTED_AFTER_STOP = ConcurrentHashMap.newKeySet();

	private static volatile boolean stopped;

	private static final Map<String, CountDownLatch> GATES = new ConcurrentHashMap<>();

	/** Tasks whose handlers run now, by payload. */
	private static final Set<String> RUNNING = ConcurrentHashMap.newKeySet();

	private final TestRedis redis;

	StopDuringRedisStallIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void repeatedStallsWithRestartsLeaveTheQueueItsWholeConcurrency() {
		ShortLeases
			.runner(this.redis, "delayed-tasks.worker.lease-duration=20s", "delayed-tasks.worker.max-claim=1",
					"delayed-tasks.worker.block-timeout=200ms")
			.withUserConfiguration(Handlers.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				HandlerContainer container = context.getBean(DelayedTaskHandlerRegistry.class)
					.getHandlers()
					.stream()
					.filter((handler) -> handler.queue().equals(QUEUE))
					.findFirst()
					.orElseThrow();
				RedisClient client = RedisClient.create(this.redis.uri());
				try (StatefulRedisConnection<String, String> admin = client.connect()) {
					for (int cycle = 0; cycle < CYCLES; cycle++) {
						String round = "stall-" + cycle;
						runAtOnce(scheduler, round);
						// Redis stops answering while the handlers finish and the
						// container stops: their outcomes cannot be recorded.
						admin.sync().clientPause(PAUSE.toMillis());
						GATES.get(round).countDown();
						await().atMost(Duration.ofSeconds(10))
							.untilAsserted(() -> assertThat(RUNNING).noneMatch((payload) -> payload.startsWith(round)));
						container.stop();
						await().atMost(PAUSE.plusSeconds(20))
							.untilAsserted(() -> assertThat(admin.sync().ping()).isEqualTo("PONG"));
						container.start();
					}
					// Still CONCURRENCY tasks at once after every stall.
					runAtOnce(scheduler, "after");
					GATES.get("after").countDown();
				}
				finally {
					client.shutdown();
				}
			});
	}

	@Test
	void stopDuringAStallEndsWithinItsTimeoutAndAClaimItGaveUpOnNeverRunsHere() {
		// Leases long enough that "released" and "reaped after the lease" differ.
		ShortLeases
			.runner(this.redis, "delayed-tasks.worker.lease-duration=30s", "delayed-tasks.worker.max-claim=4",
					"delayed-tasks.worker.block-timeout=200ms",
					"delayed-tasks.worker.shutdown-timeout=" + SHUTDOWN_TIMEOUT.toMillis() + "ms")
			.withUserConfiguration(Handlers.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				HandlerContainer container = context.getBean(DelayedTaskHandlerRegistry.class)
					.getHandlers()
					.stream()
					.filter((handler) -> handler.queue().equals(STOPPED))
					.findFirst()
					.orElseThrow();
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), STOPPED);
				GATES.put(STOPPED, new CountDownLatch(1));
				for (int i = 0; i < 6; i++) {
					scheduler.enqueue(STOPPED, STOPPED + "-" + i);
				}
				await().atMost(Duration.ofSeconds(30))
					.untilAsserted(() -> assertThat(RUNNING).filteredOn((payload) -> payload.startsWith(STOPPED))
						.hasSize(CONCURRENCY));
				AtomicReference<Duration> took = new AtomicReference<>();
				RedisClient client = RedisClient.create(this.redis.uri());
				try (StatefulRedisConnection<String, String> admin = client.connect()) {
					admin.sync().clientPause(LONG_PAUSE.toMillis());
					// The handlers return: the dispatcher claims the next tasks and waits
					// for Redis's reply.
					GATES.get(STOPPED).countDown();
					await().atMost(Duration.ofSeconds(10))
						.untilAsserted(() -> assertThat(RUNNING).noneMatch((payload) -> payload.startsWith(STOPPED)));
					long start = System.nanoTime();
					container.stop();
					stopped = true;
					took.set(Duration.ofNanos(System.nanoTime() - start));
					await().atMost(LONG_PAUSE.plusSeconds(20))
						.untilAsserted(() -> assertThat(admin.sync().ping()).isEqualTo("PONG"));
				}
				finally {
					client.shutdown();
				}
				// What the claim leased goes back at once, not after its 30 s lease; only
				// tasks that ran and whose outcomes the stop gave up may wait for theirs,
				// as after a crash.
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(template.opsForZSet().range(keys.lease(), 0, -1)).as("leased tasks")
						.isSubsetOf(RAN_IDS));
				assertThat(STARTED_AFTER_STOP).as("tasks run by the stopped container").isEmpty();
				// The whole stop fits in the shutdown timeout, waits for the dispatcher
				// and
				// the timer included.
				assertThat(took.get()).as("stop during a stall").isLessThan(SHUTDOWN_TIMEOUT.plusMillis(500));
				stopped = false;
				container.start();
				await().atMost(Duration.ofSeconds(30))
					.untilAsserted(() -> assertThat(template.opsForList().size(keys.ready())).isZero());
			});
	}

	@Test
	void anInterruptInsideAClaimLosesNeitherTheClaimedTasksNorTheDispatcher() {
		ShortLeases
			.runner(this.redis, "delayed-tasks.worker.lease-duration=30s", "delayed-tasks.worker.max-claim=4",
					"delayed-tasks.worker.block-timeout=200ms",
					"delayed-tasks.worker.shutdown-timeout=" + SHUTDOWN_TIMEOUT.toMillis() + "ms")
			.withUserConfiguration(Handlers.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), INTERRUPTED);
				GATES.put(INTERRUPTED, new CountDownLatch(1));
				for (int i = 0; i < 6; i++) {
					scheduler.enqueue(INTERRUPTED, INTERRUPTED + "-" + i);
				}
				await().atMost(Duration.ofSeconds(30))
					.untilAsserted(() -> assertThat(RUNNING).filteredOn((payload) -> payload.startsWith(INTERRUPTED))
						.hasSize(CONCURRENCY));
				RedisClient client = RedisClient.create(this.redis.uri());
				try (StatefulRedisConnection<String, String> admin = client.connect()) {
					admin.sync().clientPause(PAUSE.toMillis());
					// The handlers return: the dispatcher claims the next tasks and waits
					// for Redis's reply, where an interrupt finds it.
					GATES.get(INTERRUPTED).countDown();
					await().atMost(Duration.ofSeconds(10))
						.untilAsserted(
								() -> assertThat(RUNNING).noneMatch((payload) -> payload.startsWith(INTERRUPTED)));
					Thread dispatcher = Thread.getAllStackTraces()
						.keySet()
						.stream()
						.filter((thread) -> thread.getName()
							.startsWith("delayed-tasks-dispatcher-" + INTERRUPTED + "-"))
						.filter(Thread::isAlive)
						.findFirst()
						.orElseThrow();
					await().atMost(Duration.ofSeconds(5))
						.until(() -> dispatcher.getState() == Thread.State.TIMED_WAITING
								|| dispatcher.getState() == Thread.State.WAITING);
					dispatcher.interrupt();
					await().atMost(PAUSE.plusSeconds(20))
						.untilAsserted(() -> assertThat(admin.sync().ping()).isEqualTo("PONG"));
				}
				finally {
					client.shutdown();
				}
				// The interrupted claim's tasks come back at once, not after their 30 s
				// lease, and the dispatcher goes on claiming: everything runs.
				await().atMost(Duration.ofSeconds(15))
					.untilAsserted(() -> assertThat(template.opsForList().size(keys.ready())).isZero());
				await().atMost(Duration.ofSeconds(15))
					.untilAsserted(
							() -> assertThat(RAN_PAYLOADS).filteredOn((payload) -> payload.startsWith(INTERRUPTED))
								.hasSize(6));
			});
	}

	@Test
	void aRestartRunsTheWholeConcurrencyWhileHandlersAStopGaveUpOnStillRun() {
		// Leases long enough that the stuck runs' tasks are not reaped during the test.
		ShortLeases
			.runner(this.redis, "delayed-tasks.worker.lease-duration=30s", "delayed-tasks.worker.max-claim=1",
					"delayed-tasks.worker.block-timeout=200ms")
			.withUserConfiguration(Handlers.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				HandlerContainer container = context.getBean(DelayedTaskHandlerRegistry.class)
					.getHandlers()
					.stream()
					.filter((handler) -> handler.queue().equals(STUCK))
					.findFirst()
					.orElseThrow();
				try {
					runAtOnce(scheduler, STUCK, "stuck");
					// The handlers ignore the interrupt (as one blocked in a call to a
					// stalled Redis does): the stop ends with them still running.
					container.stop();
					assertThat(RUNNING).filteredOn((payload) -> payload.startsWith("stuck-")).hasSize(CONCURRENCY);
					container.start();
					runAtOnce(scheduler, STUCK, "after-stuck");
				}
				finally {
					GATES.values().forEach(CountDownLatch::countDown);
				}
			});
	}

	private static void runAtOnce(DelayedTaskScheduler scheduler, String round) {
		runAtOnce(scheduler, QUEUE, round);
	}

	private static void runAtOnce(DelayedTaskScheduler scheduler, String queue, String round) {
		GATES.put(round, new CountDownLatch(1));
		for (int i = 0; i < CONCURRENCY; i++) {
			scheduler.enqueue(queue, round + "-" + i);
		}
		await().atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThat(RUNNING).as("tasks of round %s running at once", round)
				.filteredOn((payload) -> payload.startsWith(round + "-"))
				.hasSize(CONCURRENCY));
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@DelayedTaskHandler(queue = QUEUE, concurrency = "" + CONCURRENCY)
		void handle(String payload, TaskContext context) throws InterruptedException {
			run(payload);
		}

		@DelayedTaskHandler(queue = STOPPED, concurrency = "" + CONCURRENCY)
		void handleStopped(String payload, TaskContext context) throws InterruptedException {
			RAN_IDS.add(context.id().value());
			if (stopped) {
				STARTED_AFTER_STOP.add(payload);
			}
			run(payload);
		}

		@DelayedTaskHandler(queue = INTERRUPTED, concurrency = "" + CONCURRENCY)
		void handleInterrupted(String payload, TaskContext context) throws InterruptedException {
			run(payload);
		}

		@DelayedTaskHandler(queue = STUCK, concurrency = "" + CONCURRENCY)
		void handleStuck(String payload, TaskContext context) {
			RUNNING.add(payload);
			try {
				CountDownLatch gate = GATES.get(payload.substring(0, payload.lastIndexOf('-')));
				boolean interrupted = false;
				while (gate.getCount() > 0) {
					try {
						gate.await();
					}
					catch (InterruptedException ex) {
						interrupted = true;
					}
				}
				if (interrupted) {
					Thread.currentThread().interrupt();
				}
			}
			finally {
				RUNNING.remove(payload);
			}
		}

		private static void run(String payload) throws InterruptedException {
			RAN_PAYLOADS.add(payload);
			RUNNING.add(payload);
			try {
				CountDownLatch gate = GATES.get(payload.substring(0, payload.lastIndexOf('-')));
				if (gate != null) {
					gate.await(60, TimeUnit.SECONDS);
				}
			}
			finally {
				RUNNING.remove(payload);
			}
		}

	}

}

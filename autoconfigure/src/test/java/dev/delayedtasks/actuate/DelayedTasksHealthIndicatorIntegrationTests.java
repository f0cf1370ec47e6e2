package dev.delayedtasks.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksHealthContributorAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksSnapshotsAutoConfiguration;
import dev.delayedtasks.internal.actuate.QueueSnapshots;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.test.RedisKind;
import dev.delayedtasks.test.RedisServer;
import dev.delayedtasks.test.RedisServers;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code delayedTasks} health indicator on real handlers and a real Redis: UP while
 * handlers run and queues have timer owners, whatever the backlog or a pause; details per
 * queue (a paused queue says so) and the queues with ready tasks but no handler anywhere;
 * DOWN once the handler registry has stopped, or a handled queue's timer has had no owner
 * for three timer TTLs; never a Redis call of its own.
 */
@WithRedis
class DelayedTasksHealthIndicatorIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final String NO_SET_USER = "no-set";

	private static final String NO_SET_PASSWORD = "no-set-password";

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	DelayedTasksHealthIndicatorIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = runner(redis.url());
	}

	private ApplicationContextRunner runner(String url) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksSnapshotsAutoConfiguration.class,
					DelayedTasksHealthContributorAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + url, "delayed-tasks.key-prefix=" + this.redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.worker.shutdown-timeout=1s",
					"delayed-tasks.snapshot-interval=200ms");
	}

	@Test
	void upWithRunningHandlersAndTimerOwnersWithDetailsPerQueue() {
		String queue = "h-up";
		this.runner.withPropertyValues("test.queue=" + queue)
			.withUserConfiguration(HealthHandler.class)
			.run((context) -> {
				DelayedTasksHealthIndicator indicator = context.getBean(DelayedTasksHealthIndicator.class);
				context.getBean(DelayedTaskScheduler.class).enqueue(queue, "run me");
				Health health = awaitHealth(indicator, (candidate) -> queueDetails(candidate, queue) != null
						&& !"none".equals(queueDetails(candidate, queue).get("timerOwner")));
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				Map<String, Object> details = queueDetails(health, queue);
				assertThat(details).containsKeys("ready", "dead", "oldestReadyAge", "timerOwner");
				assertThat(details).containsEntry("dead", 0L)
					.containsEntry("handler", queue + "-handler")
					.containsEntry("running", true);
				assertThat(details.get("timerOwner")).isInstanceOf(String.class).isNotEqualTo("none");
				assertThat(Duration.parse((String) details.get("oldestReadyAge")))
					.isGreaterThanOrEqualTo(Duration.ZERO);
				assertThat(readyWithoutHandler(health)).doesNotContain(queue);
				assertThat(health.getDetails()).containsKey("snapshotAt");
				assertThat(health.getDetails()).doesNotContainKey("problem");
			});
	}

	@Test
	void aPausedQueueIsUpAndShowsAsPausedUntilResumed() {
		String queue = "h-paused";
		this.runner.withPropertyValues("test.queue=" + queue)
			.withUserConfiguration(HealthHandler.class)
			.run((context) -> {
				DelayedTasksHealthIndicator indicator = context.getBean(DelayedTasksHealthIndicator.class);
				QueueControl control = context.getBean(QueueControl.class);
				awaitHealth(indicator, (candidate) -> queueDetails(candidate, queue) != null
						&& Boolean.FALSE.equals(queueDetails(candidate, queue).get("paused")));
				control.pause(queue);
				context.getBean(DelayedTaskScheduler.class).enqueue(queue, "waits while paused");
				Health paused = awaitHealth(indicator,
						(candidate) -> Boolean.TRUE.equals(queueDetails(candidate, queue).get("paused"))
								&& Long.valueOf(1).equals(queueDetails(candidate, queue).get("ready")));
				assertThat(paused.getStatus()).isEqualTo(Status.UP);
				assertThat(paused.getDetails()).doesNotContainKey("problem");
				control.resume(queue);
				Health resumed = awaitHealth(indicator,
						(candidate) -> Boolean.FALSE.equals(queueDetails(candidate, queue).get("paused")));
				assertThat(resumed.getStatus()).isEqualTo(Status.UP);
			});
	}

	@Test
	void readyWithoutHandlerListsQueuesWithReadyTasksThatNoInstanceHandles() {
		String orphan = "h-orphan";
		String handledElsewhere = "h-handled-elsewhere";
		// Another instance handles one queue (paused, so its tasks stay ready).
		this.runner.withPropertyValues("test.queue=" + handledElsewhere)
			.withUserConfiguration(HealthHandler.class)
			.run((other) -> {
				other.getBean(QueueControl.class).pause(handledElsewhere);
				DelayedTaskScheduler otherScheduler = other.getBean(DelayedTaskScheduler.class);
				otherScheduler.enqueue(handledElsewhere, "waits");
				// This instance is producer-only.
				this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
					DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
					scheduler.enqueue(orphan, "nobody runs me");
					scheduler.enqueue(orphan, "nor me");
					DelayedTasksHealthIndicator indicator = context.getBean(DelayedTasksHealthIndicator.class);
					// A snapshot taken after both enqueues.
					Health health = awaitHealth(indicator,
							(candidate) -> readyWithoutHandler(candidate).contains(orphan)
									&& Long.valueOf(2).equals(queueDetails(candidate, orphan).get("ready"))
									&& queueDetails(candidate, handledElsewhere) != null
									&& Long.valueOf(1).equals(queueDetails(candidate, handledElsewhere).get("ready")));
					assertThat(health.getStatus()).isEqualTo(Status.UP);
					assertThat(readyWithoutHandler(health)).contains(orphan).doesNotContain(handledElsewhere);
					assertThat(queueDetails(health, orphan)).containsEntry("ready", 2L)
						.containsEntry("timerOwner", "none")
						.doesNotContainKey("handler");
					assertThat(queueDetails(health, handledElsewhere).get("timerOwner")).isNotEqualTo("none");
				});
				other.getBean(QueueControl.class).resume(handledElsewhere);
			});
	}

	@Test
	void bigBacklogIsStillUp() {
		String queue = "h-backlog";
		String orphan = "h-backlog-orphan";
		this.runner.withPropertyValues("test.queue=" + queue)
			.withUserConfiguration(HealthHandler.class)
			.run((context) -> {
				context.getBean(QueueControl.class).pause(queue);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				List<TaskRequest> backlog = new ArrayList<>();
				List<TaskRequest> orphans = new ArrayList<>();
				for (int i = 0; i < 2000; i++) {
					backlog.add(TaskRequest.of(queue, "task " + i));
					orphans.add(TaskRequest.of(orphan, "task " + i));
				}
				scheduler.scheduleAll(backlog);
				scheduler.scheduleAll(orphans);
				DelayedTasksHealthIndicator indicator = context.getBean(DelayedTasksHealthIndicator.class);
				// A snapshot taken once the backlog has waited half a second.
				Health health = awaitHealth(indicator,
						(candidate) -> queueDetails(candidate, queue) != null
								&& Long.valueOf(2000).equals(queueDetails(candidate, queue).get("ready"))
								&& Duration.parse((String) queueDetails(candidate, queue).get("oldestReadyAge"))
									.compareTo(Duration.ofMillis(500)) >= 0
								&& queueDetails(candidate, orphan) != null
								&& Long.valueOf(2000).equals(queueDetails(candidate, orphan).get("ready")));
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(readyWithoutHandler(health)).contains(orphan).doesNotContain(queue);
				// From the snapshot: a check takes no Redis round trip, however long the
				// queues.
				long started = System.nanoTime();
				for (int i = 0; i < 100; i++) {
					assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
				}
				assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(1));
			});
	}

	@Test
	void downAfterTheHandlerRegistryStopsAndUpAgainOnceItRestarts() {
		String queue = "h-stopped";
		this.runner.withPropertyValues("test.queue=" + queue)
			.withUserConfiguration(HealthHandler.class)
			.run((context) -> {
				DelayedTasksHealthIndicator indicator = context.getBean(DelayedTasksHealthIndicator.class);
				awaitHealth(indicator, (candidate) -> queueDetails(candidate, queue) != null
						&& !"none".equals(queueDetails(candidate, queue).get("timerOwner")));
				assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
				DelayedTaskHandlerRegistry registry = context.getBean(DelayedTaskHandlerRegistry.class);
				registry.stop();
				Health health = indicator.health();
				assertThat(health.getStatus()).isEqualTo(Status.DOWN);
				assertThat(health.getDetails()).containsEntry("problem", "the handler registry is not running");
				registry.start();
				await().atMost(WAIT).until(() -> indicator.health().getStatus().equals(Status.UP));
			});
	}

	@Test
	void producerOnlyInstanceIsUpAndShowsTheQueues() {
		String queue = "h-producer";
		this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(DelayedTaskHandlerRegistry.class);
			context.getBean(DelayedTaskScheduler.class).schedule(queue, "later", Duration.ofHours(1));
			Health health = awaitHealth(context.getBean(DelayedTasksHealthIndicator.class),
					(candidate) -> queueDetails(candidate, queue) != null);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(queueDetails(health, queue)).containsEntry("ready", 0L).containsEntry("dead", 0L);
			assertThat(readyWithoutHandler(health)).doesNotContain(queue);
		});
	}

	@Test
	void queueWhoseKeysCannotBeReadIsListedAndStaysUp() {
		String queue = "h-unreadable";
		this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			DelayedTasksHealthIndicator indicator = context.getBean(DelayedTasksHealthIndicator.class);
			context.getBean(DelayedTaskScheduler.class).schedule(queue, "later", Duration.ofHours(1));
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			String sched = PartitionKeys.of(this.redis.keyPrefix(), queue).sched();
			redis.delete(sched);
			redis.opsForValue().set(sched, "not a sorted set");
			Health health = awaitHealth(indicator, (candidate) -> unreadableQueues(candidate).contains(queue));
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			Map<String, Object> details = queueDetails(health, queue);
			if (details != null) {
				// Read once before the key broke: those stats stay, marked as old.
				assertThat((String) details.get("unreadable")).contains("WRONGTYPE");
			}
			redis.delete(sched);
			health = awaitHealth(indicator, (candidate) -> !unreadableQueues(candidate).contains(queue));
			assertThat(queueDetails(health, queue)).doesNotContainKey("unreadable");
		});
	}

	@Test
	void redisGoingAwayDoesNotMakeItDown() throws Exception {
		String queue = "h-redis-gone";
		RedisServer server = RedisServers.fromEnvironment().startPrivate(RedisKind.ANY, List.of());
		try (server) {
			// A Redis call would wait out the 3 s command timeout for a server that is
			// gone.
			runner(server.url()).withPropertyValues("test.queue=" + queue, "spring.data.redis.timeout=3s")
				.withUserConfiguration(HealthHandler.class)
				.run((context) -> {
					DelayedTasksHealthIndicator indicator = context.getBean(DelayedTasksHealthIndicator.class);
					awaitHealth(indicator, (candidate) -> queueDetails(candidate, queue) != null
							&& !"none".equals(queueDetails(candidate, queue).get("timerOwner")));
					server.close();
					Thread.sleep(1500);
					long started = System.nanoTime();
					Health health = indicator.health();
					assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(1));
					assertThat(health.getStatus()).isEqualTo(Status.UP);
					assertThat(queueDetails(health, queue)).containsEntry("handler", queue + "-handler");
				});
		}
	}

	@Test
	void downWhenTheTimerOfAHandledQueueReallyHasNoOwnerForThreeTimerTtls() throws Exception {
		String queue = "h-no-owner";
		RedisServer server = RedisServers.fromEnvironment().startPrivate(RedisKind.ANY, List.of());
		try (server) {
			// Everything but SET: the handler claims and acknowledges,
			// but no instance can take the queue's timer lease
			// (SET ... PX), so the timer has no owner in Redis.
			RedisClient admin = RedisClient.create(server.uri());
			try (StatefulRedisConnection<String, String> connection = admin.connect()) {
				connection.sync()
					.aclSetuser(NO_SET_USER,
							AclSetuserArgs.Builder.reset()
								.on()
								.addPassword(NO_SET_PASSWORD)
								.allKeys()
								.allCommands()
								.removeCommand(CommandType.SET));
			}
			finally {
				admin.shutdown();
			}
			String url = "redis://" + NO_SET_USER + ":" + NO_SET_PASSWORD + "@" + server.uri().getHost() + ":"
					+ server.uri().getPort();
			runner(url).withPropertyValues("test.queue=" + queue)
				.withUserConfiguration(HealthHandler.class)
				.run((context) -> {
					assertThat(context).hasNotFailed();
					DelayedTasksHealthIndicator indicator = context.getBean(DelayedTasksHealthIndicator.class);
					HandlerContainer handler = context.getBean(DelayedTaskHandlerRegistry.class)
						.getHandler(queue + "-handler")
						.orElseThrow();
					// The first snapshot without an owner: a takeover may be under way.
					Health first = awaitHealth(indicator, (candidate) -> queueDetails(candidate, queue) != null);
					assertThat(first.getStatus()).isEqualTo(Status.UP);
					assertThat(queueDetails(first, queue)).containsEntry("timerOwner", "none");
					Health health = awaitHealth(indicator, (candidate) -> Status.DOWN.equals(candidate.getStatus()));
					assertThat(queueDetails(health, queue)).containsEntry("timerOwner", "none")
						.containsEntry("running", true)
						.containsEntry("problem", "no timer owner for over PT3S");
					assertThat(handler.isRunning()).isTrue();
					assertThat(handler.isTimerOwner()).isFalse();
					assertThat(context.getBean(RedisQueueStats.class).read(queue).timerOwner()).isNull();
				});
		}
	}

	@Test
	void handlerStartedBetweenTwoSnapshotsIsNotDownWhileTheSnapshotPredatesItsTimer() {
		String queue = "h-late-start";
		// The snapshot is refreshed less often than the ownerless tolerance (3 x 1 s).
		this.runner.withPropertyValues("test.queue=" + queue, "delayed-tasks.snapshot-interval=20s")
			.withUserConfiguration(ManualHandler.class)
			.run((context) -> {
				DelayedTasksHealthIndicator indicator = context.getBean(DelayedTasksHealthIndicator.class);
				QueueSnapshots snapshots = context.getBean(QueueSnapshots.class);
				await().atMost(WAIT).until(() -> snapshots.current().containsKey(queue));
				assertThat(snapshots.current().get(queue).timerOwner()).isNull();
				HandlerContainer handler = context.getBean(DelayedTaskHandlerRegistry.class)
					.getHandler(queue + "-handler")
					.orElseThrow();
				handler.start();
				await().atMost(WAIT).until(handler::isTimerOwner);
				List<Status> statuses = new ArrayList<>();
				long end = System.nanoTime() + Duration.ofSeconds(4).toNanos();
				while (System.nanoTime() < end) {
					statuses.add(indicator.health().getStatus());
					Thread.sleep(100);
				}
				// The timer has had an owner all along: only the snapshot is old.
				assertThat(statuses).containsOnly(Status.UP);
				snapshots.refresh();
				assertThat(queueDetails(indicator.health(), queue).get("timerOwner")).isNotEqualTo("none");
			});
	}

	@Test
	void thousandsOfQueueNamesGiveDetailsForAtMostMaxQueuesAndCountTheRest() {
		String queue = "h-bounded";
		// An index of its own: the other tests' queues are not in it.
		this.runner
			.withPropertyValues("delayed-tasks.key-prefix=" + this.redis.keyPrefix() + ":own", "test.queue=" + queue,
					"delayed-tasks.monitoring.max-queues=5")
			.withUserConfiguration(HealthHandler.class)
			.run((context) -> {
				DelayedTasksHealthIndicator indicator = context.getBean(DelayedTasksHealthIndicator.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				int names = 1000;
				for (int i = 0; i < names; i++) {
					scheduler.enqueue(String.format("h-user-%04d", i), "job");
				}
				Health health = awaitHealth(indicator,
						(candidate) -> Integer.valueOf(names + 1).equals(candidate.getDetails().get("knownQueues")));
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				@SuppressWarnings("unchecked")
				Map<String, Object> queues = (Map<String, Object>) health.getDetails().get("queues");
				// Before, a detail per queue: here 1,001.
				assertThat(queues).containsOnlyKeys(queue, "h-user-0000", "h-user-0001", "h-user-0002", "h-user-0003");
				assertThat(health.getDetails()).containsEntry("unreportedQueues", names + 1 - 5);
				assertThat(readyWithoutHandler(health)).hasSizeLessThanOrEqualTo(5);
			});
	}

	private static Health awaitHealth(DelayedTasksHealthIndicator indicator, Predicate<Health> condition) {
		return await().atMost(WAIT).until(indicator::health, condition);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> queueDetails(Health health, String queue) {
		Map<String, Object> queues = (Map<String, Object>) health.getDetails().get("queues");
		return (queues != null) ? (Map<String, Object>) queues.get(queue) : null;
	}

	@SuppressWarnings("unchecked")
	private static Set<String> unreadableQueues(Health health) {
		return (Set<String>) health.getDetails().get("unreadableQueues");
	}

	@SuppressWarnings("unchecked")
	private static List<String> readyWithoutHandler(Health health) {
		return (List<String>) health.getDetails().get("readyWithoutHandler");
	}

	@Configuration(proxyBeanMethods = false)
	static class ManualHandler {

		@DelayedTaskHandler(queue = "${test.queue}", id = "${test.queue}-handler", autoStartup = "false")
		void handle(String payload, TaskContext context) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class HealthHandler {

		@DelayedTaskHandler(queue = "${test.queue}", id = "${test.queue}-handler")
		void handle(String payload, TaskContext context) {
		}

	}

}

package dev.delayedtasks.deploy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueRemoval;
import dev.delayedtasks.ReactiveDelayedTaskScheduler;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.deploy.DeployHandlers.Command;
import dev.delayedtasks.internal.server.RefreshOptions;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.test.RedisCluster;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Delayed tasks on a three-master Redis Cluster configured through
 * {@code spring.data.redis.cluster.*}: queues whose partitions live on different masters
 * schedule, fire, retry, dead-letter, cancel, reschedule and redrive, and each dispatcher
 * blocks on the master that owns its queue's slot.
 */
@WithRedis(cluster = true)
@ExtendWith(OutputCaptureExtension.class)
class ClusterIntegrationTests {

	/** Queues whose hash tags {@code {<queue>:0}} hash to slots of all three masters. */
	private static final List<String> QUEUES = List.of("cl-bills", "orders", "mails");

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final RedisCluster cluster;

	private final ApplicationContextRunner runner;

	ClusterIntegrationTests(TestRedis redis) {
		this.cluster = redis.cluster();
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.cluster.nodes=" + this.cluster.nodesProperty(),
					"spring.data.redis.lettuce.cluster.refresh.period=5s", "spring.data.redis.timeout=2s",
					"delayed-tasks.key-prefix=" + redis.keyPrefix(), "delayed-tasks.worker.lease-duration=2s",
					"delayed-tasks.worker.reap-grace=500ms", "delayed-tasks.worker.timer-ttl=1s",
					"delayed-tasks.worker.shutdown-timeout=1s", "delayed-tasks.retry.max-retries=1",
					"delayed-tasks.retry.delay=100ms", "delayed-tasks.retry.jitter=0ms")
			.withBean(DeployHandlers.class, DeployHandlers::new);
	}

	@Test
	void startsWithoutWarningsWhenTopologyRefreshIsOn(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).doesNotContain("topology refresh").doesNotContain("did not report its maxmemory-policy");
		});
	}

	@Test
	void warnsAtStartupWhenACustomizerSwitchesTopologyRefreshOff(CapturedOutput output) {
		LettuceClientOptionsBuilderCustomizer refreshOff = (builder) -> ((ClusterClientOptions.Builder) builder)
			.topologyRefreshOptions(RefreshOptions.off());
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.cluster.nodes=" + this.cluster.nodesProperty(),
					"delayed-tasks.worker.enabled=false")
			.withBean(LettuceClientOptionsBuilderCustomizer.class, () -> refreshOff)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Redis Cluster is used with Lettuce topology refresh switched off")
					.contains("spring.data.redis.lettuce.cluster.refresh.period=");
			});
	}

	@Test
	void anAllKeysEvictionPolicyOnOneMasterStopsStartup() {
		int port = this.cluster.masters().get(1).port();
		admin(port, (commands) -> commands.configSet("maxmemory-policy", "allkeys-lru"));
		try {
			this.runner.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("maxmemory-policy is allkeys-lru"));
		}
		finally {
			admin(port, (commands) -> commands.configSet("maxmemory-policy", "noeviction"));
		}
	}

	@Test
	void theQueuesLiveOnDifferentMasters() {
		Map<String, Integer> owners = owners();
		System.out.println("cluster queue owners (queue=master port) " + owners);
		assertThat(Set.copyOf(owners.values())).hasSize(3);
	}

	@Test
	void theNonBlockingAndReactiveApisWorkOnEveryMaster() {
		this.runner.run((context) -> {
			DeployHandlers handlers = context.getBean(DeployHandlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			ReactiveDelayedTaskScheduler reactive = context.getBean(ReactiveDelayedTaskScheduler.class);
			for (String queue : QUEUES) {
				List<CompletableFuture<TaskId>> futures = new ArrayList<>();
				for (int i = 0; i < 50; i++) {
					futures.add(scheduler.scheduleAsync(queue, new Command("succeed"), Duration.ofMillis(200)));
				}
				TaskId viaReactive = reactive.schedule(queue, new Command("succeed"), Duration.ofMillis(200))
					.block(WAIT);
				TaskId moved = scheduler.scheduleAsync(queue, new Command("succeed"), Duration.ofSeconds(30))
					.get(10, TimeUnit.SECONDS);
				TaskId cancelled = scheduler.scheduleAsync(queue, new Command("succeed"), Duration.ofSeconds(30))
					.get(10, TimeUnit.SECONDS);
				assertThat(scheduler.rescheduleAsync(queue, moved, Duration.ofMillis(100)).get(10, TimeUnit.SECONDS))
					.isTrue();
				assertThat(reactive.cancel(queue, cancelled).block(WAIT)).isTrue();
				assertThat(scheduler.findAsync(queue, cancelled).get(10, TimeUnit.SECONDS)).isEmpty();
				List<ScheduleResult> all = scheduler
					.scheduleAllAsync(List.of(TaskRequest.of(queue, new Command("succeed")),
							TaskRequest.of(queue, new Command("succeed"))))
					.get(10, TimeUnit.SECONDS);
				List<TaskId> ids = new ArrayList<>();
				for (CompletableFuture<TaskId> future : futures) {
					ids.add(future.get(10, TimeUnit.SECONDS));
				}
				ids.add(viaReactive);
				ids.add(moved);
				all.forEach((result) -> ids.add(result.id()));
				for (TaskId id : ids) {
					await().atMost(WAIT).until(() -> handlers.runs(queue, id).size() == 1);
				}
				assertThat(handlers.runs(queue, cancelled)).isEmpty();
			}
		});
	}

	@Test
	void everyQueueSchedulesFiresRetriesDeadLettersCancelsReschedulesAndRedrives() {
		this.runner.run((context) -> {
			DeployHandlers handlers = context.getBean(DeployHandlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DeadLetters deadLetters = context.getBean(DeadLetters.class);
			for (String queue : QUEUES) {
				TaskId delayed = scheduler.schedule(queue, new Command("succeed"), Duration.ofMillis(300));
				TaskId flaky = scheduler.enqueue(queue, new Command("fail-once"));
				TaskId doomed = scheduler.enqueue(queue, new Command("always"));
				TaskId cancelled = scheduler.schedule(queue, new Command("succeed"), Duration.ofSeconds(30));
				TaskId moved = scheduler.schedule(queue, new Command("succeed"), Duration.ofSeconds(30));
				assertThat(scheduler.cancel(queue, cancelled)).isTrue();
				assertThat(scheduler.reschedule(queue, moved, Duration.ofMillis(200))).isTrue();
				await().atMost(WAIT).until(() -> handlers.runs(queue, delayed).size() == 1);
				assertThat(handlers.runs(queue, delayed).get(0).startedAt())
					.isAfterOrEqualTo(handlers.runs(queue, delayed).get(0).dueAt());
				await().atMost(WAIT).until(() -> handlers.runs(queue, flaky).size() == 2);
				await().atMost(WAIT).until(() -> handlers.runs(queue, moved).size() == 1);
				await().atMost(WAIT).until(() -> deadLetters.count(queue) == 1);
				List<DeadLetter> dead = deadLetters.list(queue, 10);
				assertThat(dead).singleElement().satisfies((letter) -> {
					assertThat(letter.id()).isEqualTo(doomed);
					assertThat(letter.attempts()).isEqualTo(2);
					assertThat(letter.exceptionType()).isEqualTo(IllegalStateException.class.getName());
				});
				assertThat(scheduler.find(queue, cancelled)).isEmpty();
				assertThat(handlers.runs(queue, cancelled)).isEmpty();
				assertThat(deadLetters.redrive(queue, doomed)).isTrue();
				await().atMost(WAIT).until(() -> handlers.runs(queue, doomed).size() == 4);
				await().atMost(WAIT).until(() -> deadLetters.count(queue) == 1);
			}
		});
	}

	@Test
	void emptyQueuesOnEveryMasterLeaveTheIndexAndComeBackWhenScheduledTo() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			QueueControl control = context.getBean(QueueControl.class);
			QueueIndex index = context.getBean(QueueIndex.class);
			// The index is one key; each queue's keys hash to the slot of its own tag.
			for (int i = 0; i < 9; i++) {
				String queue = "cl-rm-" + i;
				TaskId id = scheduler.schedule(queue, new Command("succeed"), Duration.ofHours(1));
				assertThat(control.remove(queue).outcome()).isEqualTo(QueueRemoval.Outcome.NOT_EMPTY);
				assertThat(scheduler.cancel(queue, id)).isTrue();
				assertThat(control.remove(queue).removed()).as(queue).isTrue();
				assertThat(index.contains(queue)).as(queue).isFalse();
				scheduler.schedule(queue, new Command("succeed"), Duration.ofHours(1));
				assertThat(index.contains(queue)).as(queue).isTrue();
			}
		});
	}

	@Test
	void eachDispatcherBlocksOnTheMasterOwningItsQueue() {
		// Idle dispatchers block 10 s: a task that waited for a block to end, instead of
		// waking the dispatcher blocked on its master, would be seconds late.
		this.runner.withPropertyValues("delayed-tasks.worker.block-timeout=10s").run((context) -> {
			DeployHandlers handlers = context.getBean(DeployHandlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			Map<String, Integer> owners = owners();
			await().atMost(WAIT).untilAsserted(() -> {
				for (int port : owners.values()) {
					assertThat(blockedClients(port)).as("clients blocked on master %d", port).isPositive();
				}
			});
			// With every dispatcher idle in BLPOP, a task enqueued now runs only because
			// its wake token reached the dispatcher blocked on the owning master.
			for (String queue : QUEUES) {
				TaskId id = scheduler.enqueue(queue, new Command("succeed"));
				await().atMost(Duration.ofSeconds(5)).until(() -> handlers.runs(queue, id).size() == 1);
			}
		});
	}

	/**
	 * The port of the master owning each queue's partition, from {@code CLUSTER NODES}.
	 */
	private Map<String, Integer> owners() {
		String nodes = admin(this.cluster.masters().get(0).port(), (commands) -> commands.clusterNodes());
		Map<String, Integer> owners = new LinkedHashMap<>();
		for (String queue : QUEUES) {
			int slot = SlotHash.getSlot("{" + queue + ":0}");
			owners.put(queue,
					nodes.lines()
						.filter((line) -> line.contains("master") && !line.contains("fail"))
						.filter((line) -> ownsSlot(line, slot))
						.map((line) -> Integer.parseInt(line.split(" ")[1].replaceAll(".*:(\\d+)@.*", "$1")))
						.findFirst()
						.orElseThrow());
		}
		return owners;
	}

	private static boolean ownsSlot(String nodeLine, int slot) {
		String[] fields = nodeLine.split(" ");
		for (int i = 8; i < fields.length; i++) {
			String[] range = fields[i].split("-");
			if (!range[0].startsWith("[") && Integer.parseInt(range[0]) <= slot
					&& slot <= Integer.parseInt(range[range.length - 1])) {
				return true;
			}
		}
		return false;
	}

	private int blockedClients(int port) {
		String info = admin(port, (commands) -> commands.info("clients"));
		return info.lines()
			.filter((line) -> line.startsWith("blocked_clients:"))
			.map((line) -> Integer.parseInt(line.substring("blocked_clients:".length()).trim()))
			.findFirst()
			.orElse(0);
	}

	static <T> T admin(int port, Function<RedisCommands<String, String>, T> call) {
		RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return call.apply(connection.sync());
		}
		finally {
			client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
		}
	}

}

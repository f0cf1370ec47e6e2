package dev.delayedtasks.deploy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskOutcome.Kind;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.deploy.DeployHandlers.Command;
import dev.delayedtasks.internal.tracking.OutcomeTracker;
import dev.delayedtasks.test.RedisCluster;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.KillArgs;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Completion tracking on a Redis Cluster of three masters with a replica each: the ending
 * scripts publish on the master that owns the queue's slot and the tracker is subscribed
 * on whichever node its Pub/Sub connection reached, so outcomes cross the cluster bus.
 * Tracked and awaited tasks on every master complete with their outcomes, also when
 * another application runs them, and after the node holding the tracker's subscription
 * dies.
 */
@WithRedis(cluster = true, replicasPerMaster = 1)
class ClusterTrackingIntegrationTests {

	/** Queues whose hash tags {@code {<queue>:0}} hash to slots of all three masters. */
	private static final List<String> QUEUES = List.of("cl-bills", "orders", "mails");

	private static final Duration WAIT = Duration.ofSeconds(20);

	/**
	 * The delay of an untracked task awaited with {@code awaitOutcome}: the call must
	 * reach the live task, since an untracked task that has ended keeps no outcome.
	 */
	private static final Duration NOT_BEFORE_AWAITED = Duration.ofSeconds(2);

	private final RedisCluster cluster;

	private final ApplicationContextRunner runner;

	ClusterTrackingIntegrationTests(TestRedis redis) {
		this.cluster = redis.cluster();
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.cluster.nodes=" + this.cluster.nodesProperty(),
					"spring.data.redis.lettuce.cluster.refresh.period=2s", "spring.data.redis.timeout=2s",
					"delayed-tasks.key-prefix=" + redis.keyPrefix(), "delayed-tasks.worker.lease-duration=2s",
					"delayed-tasks.worker.reap-grace=500ms", "delayed-tasks.worker.timer-ttl=1s",
					"delayed-tasks.worker.shutdown-timeout=1s", "delayed-tasks.retry.max-retries=1",
					"delayed-tasks.retry.delay=100ms", "delayed-tasks.retry.jitter=0ms");
	}

	@Test
	void theQueuesLiveOnDifferentMasters() {
		Map<String, Integer> owners = new LinkedHashMap<>();
		for (String queue : QUEUES) {
			owners.put(queue, this.cluster.masterOf(SlotHash.getSlot("{" + queue + ":0}")).port());
		}
		assertThat(Set.copyOf(owners.values())).as("masters of %s", owners).hasSizeGreaterThanOrEqualTo(2);
	}

	@Test
	void trackedAndAwaitedTasksOnEveryMasterCompleteWithTheirOutcomes() {
		this.runner.withBean(ReceiptHandlers.class, ReceiptHandlers::new).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			Map<String, TrackedTask> succeeding = new LinkedHashMap<>();
			Map<String, TrackedTask> failing = new LinkedHashMap<>();
			Map<String, CompletableFuture<Optional<TaskOutcome>>> untracked = new LinkedHashMap<>();
			for (String queue : QUEUES) {
				succeeding.put(queue, scheduler.track(TaskRequest.of(queue, new Command("succeed"))));
				failing.put(queue, scheduler.track(TaskRequest.of(queue, new Command("always"))));
				untracked.put(queue, awaitingOutcome(scheduler, queue,
						scheduler.schedule(queue, new Command("succeed"), NOT_BEFORE_AWAITED)));
			}
			for (String queue : QUEUES) {
				assertSucceeded(queue, succeeding.get(queue).await(WAIT));
				assertDeadLettered(failing.get(queue).await(WAIT));
				assertSucceeded(queue, untracked.get(queue).get(WAIT.toSeconds() + 5, TimeUnit.SECONDS));
			}
		});
	}

	@Test
	void aTaskTrackedByOneApplicationCompletesWhenAnotherRunsIt() {
		ReceiptHandlers handlers = new ReceiptHandlers();
		this.runner.withBean(ReceiptHandlers.class, () -> handlers).run((worker) -> {
			this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((producer) -> {
				DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
				for (String queue : QUEUES) {
					TrackedTask succeeding = scheduler.track(TaskRequest.of(queue, new Command("succeed")));
					TrackedTask failing = scheduler.track(TaskRequest.of(queue, new Command("always")));
					// Scheduled by the worker's application, awaited by the producer.
					TaskId other = worker.getBean(DelayedTaskScheduler.class)
						.schedule(queue, new Command("succeed"), NOT_BEFORE_AWAITED);
					CompletableFuture<Optional<TaskOutcome>> awaited = awaitingOutcome(scheduler, queue, other);

					assertSucceeded(queue, succeeding.await(WAIT));
					assertDeadLettered(failing.await(WAIT));
					assertSucceeded(queue, awaited.get(WAIT.toSeconds() + 5, TimeUnit.SECONDS));
					assertThat(handlers.runs(queue, succeeding.id())).hasSize(1);
				}
			});
		});
	}

	@Test
	void trackingStillDeliversAfterTheNodeHoldingTheSubscriptionDies() {
		AtomicReference<RedisProcess> killed = new AtomicReference<>();
		try {
			trackThroughTheDeathOfTheSubscribedNode(killed);
		}
		finally {
			// Back as a replica: the other tests get the whole cluster.
			RedisProcess node = killed.get();
			if (node != null && !node.process().isAlive()) {
				node.restart();
			}
			this.cluster.awaitHealthy();
		}
	}

	private void trackThroughTheDeathOfTheSubscribedNode(AtomicReference<RedisProcess> killed) {
		ReceiptHandlers handlers = new ReceiptHandlers();
		this.runner.withBean(ReceiptHandlers.class, () -> handlers).run((worker) -> {
			this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((producer) -> {
				DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
				// The first track subscribes: find the node the subscription reached.
				TrackedTask first = scheduler.track(TaskRequest.of(QUEUES.get(0), new Command("succeed")));
				assertSucceeded(QUEUES.get(0), first.await(WAIT));
				String channel = producer.getBean(OutcomeTracker.class).channel();
				// A cluster Pub/Sub connection goes to any node, replicas included;
				// each reconnection tries the next. Move it until it is on a master.
				RedisProcess subscribed = subscribedNode(channel);
				List<Integer> visited = new ArrayList<>(List.of(subscribed.port()));
				while (!isMaster(subscribed) && visited.size() < 12) {
					ClusterIntegrationTests.admin(subscribed.port(),
							(commands) -> commands.clientKill(KillArgs.Builder.typePubsub()));
					subscribed = subscribedNode(channel);
					visited.add(subscribed.port());
				}
				assertThat(isMaster(subscribed)).as("subscription on a master after moving through %s", visited)
					.isTrue();
				// Tracked before the master dies, ending after its replica took over.
				Map<String, TrackedTask> before = new LinkedHashMap<>();
				for (String queue : QUEUES) {
					before.put(queue, scheduler
						.track(TaskRequest.of(queue, new Command("succeed")).delay(Duration.ofSeconds(3))));
				}
				// Replication is asynchronous: the tasks must have reached the replica.
				Long acknowledged = ClusterIntegrationTests.admin(subscribed.port(),
						(commands) -> commands.waitForReplication(1, 2000));
				assertThat(acknowledged).isEqualTo(1L);
				killed.set(subscribed);
				subscribed.kill();

				for (String queue : QUEUES) {
					assertSucceeded(queue, before.get(queue).await(WAIT));
				}
				// And after: tracked once the cluster and the subscription are back.
				for (String queue : QUEUES) {
					TrackedTask after = trackRetrying(scheduler, queue);
					assertSucceeded(queue, after.await(WAIT));
				}
				System.out.println("cluster tracking: the subscription moved through " + visited + "; master "
						+ killed.get().port() + " killed; now on " + subscribedNode(channel).port());
			});
		});
	}

	private static boolean isMaster(RedisProcess node) {
		return ClusterIntegrationTests.admin(node.port(), (commands) -> commands.info("replication"))
			.contains("role:master");
	}

	/** The running node on which the channel has a subscriber. */
	private RedisProcess subscribedNode(String channel) {
		List<RedisProcess> nodes = new CopyOnWriteArrayList<>();
		await().atMost(WAIT).until(() -> {
			nodes.clear();
			for (RedisProcess node : this.cluster.processes()) {
				if (node.process().isAlive()
						&& !ClusterIntegrationTests.admin(node.port(), (commands) -> commands.pubsubChannels(channel))
							.isEmpty()) {
					nodes.add(node);
				}
			}
			return nodes.size() == 1;
		});
		return nodes.get(0);
	}

	/** {@code awaitOutcome} on a thread of its own, called now. */
	private static CompletableFuture<Optional<TaskOutcome>> awaitingOutcome(DelayedTaskScheduler scheduler,
			String queue, TaskId id) {
		return CompletableFuture.supplyAsync(() -> scheduler.awaitOutcome(queue, id, WAIT));
	}

	/** A track call during the failover may fail: the caller tries again. */
	private static TrackedTask trackRetrying(DelayedTaskScheduler scheduler, String queue) {
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (true) {
			try {
				return scheduler.track(TaskRequest.of(queue, new Command("succeed")));
			}
			catch (RuntimeException ex) {
				assertThat(System.nanoTime()).as("tracking on '%s' failed: %s", queue, ex).isLessThan(deadline);
				sleep(200);
			}
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static void assertSucceeded(String queue, Optional<TaskOutcome> outcome) {
		assertThat(outcome).as("outcome on '%s'", queue).hasValueSatisfying((ended) -> {
			assertThat(ended.kind()).isEqualTo(Kind.SUCCEEDED);
			assertThat(ended.runs()).isEqualTo(1);
			assertThat(ended.result(Receipt.class)).contains(new Receipt(queue, ended.id().value()));
		});
	}

	private static void assertDeadLettered(Optional<TaskOutcome> outcome) {
		assertThat(outcome).hasValueSatisfying((ended) -> {
			assertThat(ended.kind()).isEqualTo(Kind.DEAD_LETTERED);
			assertThat(ended.runs()).isEqualTo(2);
			assertThat(ended.reason()).contains(FailureReason.RETRIES_EXHAUSTED.value());
			assertThat(ended.exceptionType()).contains(IllegalStateException.class.getName());
			assertThat(ended.result(Receipt.class)).isEmpty();
		});
	}

	record Receipt(String queue, String task) {
	}

	/** One handler per queue: returns a receipt, or always fails. */
	static class ReceiptHandlers {

		private final List<TaskContext> runs = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = "cl-bills")
		Receipt bills(Command command, TaskContext context) {
			return run(command, context);
		}

		@DelayedTaskHandler(queue = "orders")
		Receipt orders(Command command, TaskContext context) {
			return run(command, context);
		}

		@DelayedTaskHandler(queue = "mails")
		Receipt mails(Command command, TaskContext context) {
			return run(command, context);
		}

		private Receipt run(Command command, TaskContext context) {
			this.runs.add(context);
			if (command.action().equals("always")) {
				throw new IllegalStateException("always failing, attempt " + context.attempt());
			}
			return new Receipt(context.queue(), context.id().value());
		}

		List<TaskContext> runs(String queue, TaskId id) {
			return this.runs.stream().filter((run) -> run.queue().equals(queue) && run.id().equals(id)).toList();
		}

	}

}

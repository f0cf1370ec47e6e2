package dev.delayedtasks.deploy;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.deploy.DeployHandlers.Command;
import dev.delayedtasks.test.RedisCluster;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis Cluster of three masters with one replica each changing under a running
 * application: a queue's slot moves to another master while tasks are scheduled (the
 * client meets {@code ASK}, {@code TRYAGAIN} and {@code MOVED}), and a queue's master is
 * killed so that its replica takes over.
 */
@WithRedis(cluster = true, replicasPerMaster = 1)
class ClusterFailoverIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	/** Lease (2 s) + reap grace (500 ms), and a margin for the timer that reaps. */
	private static final Duration LEASE_AND_GRACE = Duration.ofMillis(3000);

	private final TestRedis redis;

	private final RedisCluster cluster;

	private final ApplicationContextRunner runner;

	ClusterFailoverIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.cluster = redis.cluster();
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.cluster.nodes=" + this.cluster.nodesProperty(),
					"spring.data.redis.lettuce.cluster.refresh.period=2s", "spring.data.redis.timeout=2s",
					"delayed-tasks.key-prefix=" + redis.keyPrefix(), "delayed-tasks.worker.lease-duration=2s",
					"delayed-tasks.worker.reap-grace=500ms", "delayed-tasks.worker.timer-ttl=1s",
					"delayed-tasks.worker.shutdown-timeout=1s", "delayed-tasks.retry.delay=100ms")
			.withBean(DeployHandlers.class, DeployHandlers::new);
	}

	@Test
	void aQueueKeepsWorkingWhileItsSlotMovesToAnotherMaster() {
		String queue = "orders";
		int slot = SlotHash.getSlot("{" + queue + ":0}");
		this.runner.run((context) -> {
			DeployHandlers handlers = context.getBean(DeployHandlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			List<TaskId> scheduled = new CopyOnWriteArrayList<>();
			List<Throwable> failures = new CopyOnWriteArrayList<>();
			for (int i = 0; i < 60; i++) {
				scheduled.add(scheduler.schedule(queue, new Command("succeed"), Duration.ofMillis(1500 + 20L * i)));
			}
			AtomicBoolean moving = new AtomicBoolean(true);
			Thread producer = new Thread(() -> {
				int i = 0;
				while (moving.get()) {
					try {
						Duration delay = Duration.ofMillis((i++ % 2 == 0) ? 0 : 300);
						scheduled.add(scheduler.schedule(queue, new Command("succeed"), delay));
					}
					catch (RuntimeException ex) {
						failures.add(ex);
					}
				}
			}, "producer");
			producer.start();
			RedisProcess source = this.cluster.masterOf(slot);
			RedisProcess target = otherMaster(source);
			long started = System.nanoTime();
			int moved = this.cluster.migrateSlot(slot, target, Duration.ofMillis(10));
			long migrationMillis = (System.nanoTime() - started) / 1_000_000;
			moving.set(false);
			producer.join();
			assertThat(this.cluster.masterOf(slot).port()).isEqualTo(target.port());
			System.out.println("cluster resharding: slot " + slot + " moved from " + source.port() + " to "
					+ target.port() + " with " + moved + " keys in " + migrationMillis + " ms; " + scheduled.size()
					+ " tasks scheduled, " + failures.size() + " producer failures");
			assertThat(failures).isEmpty();
			assertThat(moved).isGreaterThan(60);
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(scheduled)
					.allSatisfy((id) -> assertThat(handlers.runs(queue, id)).as("runs of %s", id).isNotEmpty()));
			// Longer than lease + grace: a claim or ack lost in the move would show up as
			// a second run by then.
			await().during(LEASE_AND_GRACE)
				.atMost(LEASE_AND_GRACE.plus(WAIT))
				.untilAsserted(() -> assertThat(scheduled)
					.allSatisfy((id) -> assertThat(handlers.runs(queue, id)).as("runs of %s", id).hasSize(1)));
			long repeated = scheduled.stream().filter((id) -> handlers.runs(queue, id).size() > 1).count();
			System.out.println("cluster resharding: tasks that ran more than once: " + repeated);
			assertThat(repeated).isZero();
		});
	}

	@Test
	void aQueueKeepsWorkingWhenItsMasterDiesAndItsReplicaTakesOver() {
		String queue = "mails";
		int slot = SlotHash.getSlot("{" + queue + ":0}");
		this.runner.run((context) -> {
			DeployHandlers handlers = context.getBean(DeployHandlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId warmUp = scheduler.enqueue(queue, new Command("succeed"));
			await().atMost(WAIT).until(() -> handlers.runs(queue, warmUp).size() == 1);
			List<TaskId> before = new CopyOnWriteArrayList<>();
			for (int i = 0; i < 20; i++) {
				before.add(scheduler.schedule(queue, new Command("succeed"), Duration.ofSeconds(4)));
			}
			RedisProcess master = this.cluster.masterOf(slot);
			RedisProcess replica = this.cluster.replicaOf(master);
			// Replication is asynchronous: without this WAIT the last acknowledged
			// writes may never reach the replica before the kill.
			Long acknowledged = ClusterIntegrationTests.admin(master.port(),
					(commands) -> commands.waitForReplication(1, 2000));
			assertThat(acknowledged).isEqualTo(1L);
			long killedAt = System.nanoTime();
			master.kill();
			TaskId after = null;
			while (after == null) {
				try {
					after = scheduler.enqueue(queue, new Command("succeed"));
				}
				catch (RuntimeException ex) {
					assertThat(System.nanoTime() - killedAt).isLessThan(WAIT.toNanos());
					Thread.sleep(100);
				}
			}
			long producerBackMillis = (System.nanoTime() - killedAt) / 1_000_000;
			TaskId scheduledAfter = after;
			await().atMost(WAIT).until(() -> handlers.runs(queue, scheduledAfter).size() == 1);
			long dispatcherBackMillis = (System.nanoTime() - killedAt) / 1_000_000;
			assertThat(this.cluster.masterOf(slot).port()).isEqualTo(replica.port());
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(before)
					.allSatisfy((id) -> assertThat(handlers.runs(queue, id)).as("runs of %s", id).isNotEmpty()));
			// The tasks scheduled before the kill reached the replica (WAIT 1): each runs
			// exactly once, also after lease + grace.
			await().during(LEASE_AND_GRACE)
				.atMost(LEASE_AND_GRACE.plus(WAIT))
				.untilAsserted(() -> assertThat(before)
					.allSatisfy((id) -> assertThat(handlers.runs(queue, id)).as("runs of %s", id).hasSize(1)));
			System.out.println("cluster failover: master " + master.port() + " killed, replica " + replica.port()
					+ " took over; producer back after " + producerBackMillis + " ms, a new task ran after "
					+ dispatcherBackMillis + " ms; all " + before.size() + " delayed tasks fired once");
			this.cluster.awaitHealthy();
		});
	}

	private RedisProcess otherMaster(RedisProcess source) {
		Set<Integer> masterPorts = Set.copyOf(this.cluster.processes()
			.stream()
			.filter((node) -> node != source && node.process().isAlive())
			.filter((node) -> ClusterIntegrationTests.admin(node.port(), (commands) -> commands.info("replication"))
				.contains("role:master"))
			.map(RedisProcess::port)
			.toList());
		return this.cluster.processes()
			.stream()
			.filter((node) -> masterPorts.contains(node.port()))
			.findFirst()
			.orElseThrow();
	}

}

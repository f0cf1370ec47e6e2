package dev.delayedtasks.deploy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.deploy.DeployHandlers.Command;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.RedisSentinels;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Delayed tasks through Redis Sentinel ({@code spring.data.redis.sentinel.*}): a master,
 * a replica and three Sentinels. After a forced failover the producer, the dispatcher and
 * the timer follow the new master: delayed tasks scheduled before it fire, and tasks
 * scheduled after it run.
 */
@WithRedis(sentinel = true)
class SentinelIntegrationTests {

	private static final String QUEUE = "sentinel-q";

	private static final Duration WAIT = Duration.ofSeconds(15);

	private final RedisSentinels sentinels;

	private final ApplicationContextRunner runner;

	SentinelIntegrationTests(TestRedis redis) {
		this.sentinels = redis.sentinels();
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.sentinel.master=" + RedisSentinels.MASTER_NAME,
					"spring.data.redis.sentinel.nodes=" + this.sentinels.sentinelNodesProperty(),
					"spring.data.redis.timeout=2s", "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.worker.shutdown-timeout=1s")
			.withBean(DeployHandlers.class, DeployHandlers::new);
	}

	@Test
	void producerDispatcherAndTimerFollowTheNewMasterAfterAFailover() {
		this.runner.run((context) -> {
			DeployHandlers handlers = context.getBean(DeployHandlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			RedisProcess first = this.sentinels.master();
			TaskId beforeAll = scheduler.schedule(QUEUE, new Command("succeed"), Duration.ofMillis(200));
			await().atMost(WAIT).until(() -> handlers.runs(QUEUE, beforeAll).size() == 1);
			List<TaskId> delayed = new ArrayList<>();
			for (int i = 0; i < 10; i++) {
				delayed
					.add(scheduler.schedule(QUEUE, new Command("succeed"), Duration.ofSeconds(4).plusMillis(50L * i)));
			}
			long failoverStarted = System.nanoTime();
			RedisProcess second = this.sentinels.failover();
			long failoverMillis = (System.nanoTime() - failoverStarted) / 1_000_000;
			assertThat(second.port()).isNotEqualTo(first.port());
			TaskId after = null;
			while (after == null) {
				try {
					after = scheduler.enqueue(QUEUE, new Command("succeed"));
				}
				catch (RuntimeException ex) {
					assertThat(System.nanoTime() - failoverStarted).isLessThan(WAIT.toNanos());
					Thread.sleep(100);
				}
			}
			long producerBackMillis = (System.nanoTime() - failoverStarted) / 1_000_000;
			TaskId scheduledAfter = after;
			await().atMost(WAIT).until(() -> handlers.runs(QUEUE, scheduledAfter).size() == 1);
			long dispatcherBackMillis = (System.nanoTime() - failoverStarted) / 1_000_000;
			TaskId delayedAfter = scheduler.schedule(QUEUE, new Command("succeed"), Duration.ofMillis(300));
			await().atMost(WAIT).until(() -> handlers.runs(QUEUE, delayedAfter).size() == 1);
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(delayed)
					.allSatisfy((id) -> assertThat(handlers.runs(QUEUE, id)).as("runs of %s", id).isNotEmpty()));
			// Once, also after lease (2 s) + grace (500 ms): a lost ack would show up as
			// a second run by then.
			await().during(Duration.ofMillis(3000))
				.atMost(WAIT)
				.untilAsserted(() -> assertThat(delayed)
					.allSatisfy((id) -> assertThat(handlers.runs(QUEUE, id)).as("runs of %s", id).hasSize(1)));
			String replication = ClusterIntegrationTests.admin(second.port(),
					(commands) -> commands.info("replication"));
			assertThat(replication).contains("role:master");
			System.out.println("sentinel failover: master " + first.port() + " -> " + second.port() + " in "
					+ failoverMillis + " ms; producer back after " + producerBackMillis + " ms, a new task ran after "
					+ dispatcherBackMillis + " ms; all " + delayed.size() + " delayed tasks fired once");
		});
	}

}

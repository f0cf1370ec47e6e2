package dev.delayedtasks.deploy;

import java.time.Duration;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.deploy.DeployHandlers.Command;
import dev.delayedtasks.internal.store.script.FunctionLibrary;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.RedisSentinels;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Functions mode through Redis Sentinel: the library an administrator loaded on the
 * master reaches the replica by replication, so after a failover the new master has it
 * and the application carries on without loading anything; the startup messages name the
 * Sentinel master.
 */
@WithRedis(sentinel = true)
@ExtendWith(OutputCaptureExtension.class)
class FunctionsSentinelIntegrationTests {

	private static final String QUEUE = "sentinel-q";

	private static final Duration WAIT = Duration.ofSeconds(15);

	private final RedisSentinels sentinels;

	private final ApplicationContextRunner runner;

	FunctionsSentinelIntegrationTests(TestRedis redis) {
		this.sentinels = redis.sentinels();
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.sentinel.master=" + RedisSentinels.MASTER_NAME,
					"spring.data.redis.sentinel.nodes=" + this.sentinels.sentinelNodesProperty(),
					"spring.data.redis.timeout=2s", "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.scripts.mode=functions", "delayed-tasks.worker.lease-duration=2s",
					"delayed-tasks.worker.reap-grace=500ms", "delayed-tasks.worker.timer-ttl=1s",
					"delayed-tasks.worker.shutdown-timeout=1s")
			.withBean(DeployHandlers.class, DeployHandlers::new);
	}

	@Test
	void theLibraryLoadedOnTheMasterServesTheNewMasterAfterAFailover(CapturedOutput output) {
		assumeThat(this.sentinels.version()).as("Redis Functions need Redis 7").doesNotStartWith("6.");
		FunctionLibrary library = new FunctionLibrary();
		RedisProcess first = this.sentinels.master();
		ClusterIntegrationTests.admin(first.port(), (commands) -> commands.functionLoad(library.text()));
		// The replica has it before the failover, as WAIT shows.
		ClusterIntegrationTests.admin(first.port(), (commands) -> commands.waitForReplication(1, 5000));
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			DeployHandlers handlers = context.getBean(DeployHandlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId before = scheduler.schedule(QUEUE, new Command("succeed"), Duration.ofMillis(200));
			await().atMost(WAIT).until(() -> handlers.runs(QUEUE, before).size() == 1);
			RedisProcess second = this.sentinels.failover();
			assertThat(second.port()).isNotEqualTo(first.port());
			TaskId after = null;
			long deadline = System.nanoTime() + WAIT.toNanos();
			while (after == null) {
				try {
					after = scheduler.enqueue(QUEUE, new Command("succeed"));
				}
				catch (RuntimeException ex) {
					assertThat(ex).hasMessageNotContaining("Function not found");
					assertThat(System.nanoTime()).isLessThan(deadline);
					Thread.sleep(100);
				}
			}
			TaskId scheduledAfter = after;
			await().atMost(WAIT).until(() -> handlers.runs(QUEUE, scheduledAfter).size() == 1);
		});
		assertThat(output).contains("the Sentinel master " + RedisSentinels.MASTER_NAME + " runs Redis");
	}

}

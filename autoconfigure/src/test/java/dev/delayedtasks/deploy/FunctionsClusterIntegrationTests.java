package dev.delayedtasks.deploy;

import java.util.List;
import java.util.function.Function;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.deploy.AclIntegrationTests.Job;
import dev.delayedtasks.internal.store.script.FunctionLibrary;
import dev.delayedtasks.test.RedisCluster;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.FlushMode;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * Functions mode on a Redis Cluster: every master needs the library, since each runs the
 * functions of its own slots. An application allowed to load it loads it on all three;
 * one master without it stops the startup of an application that may not, and a master
 * that loses it fails the calls for its queues only.
 */
@WithRedis(cluster = true)
class FunctionsClusterIntegrationTests {

	/** Queues whose hash tags {@code {<queue>:0}} hash to slots of all three masters. */
	private static final List<String> QUEUES = List.of("cl-bills", "orders", "mails");

	private final RedisCluster cluster;

	private final ApplicationContextRunner runner;

	private final FunctionLibrary library = new FunctionLibrary();

	FunctionsClusterIntegrationTests(TestRedis redis) {
		this.cluster = redis.cluster();
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.cluster.nodes=" + this.cluster.nodesProperty(),
					"spring.data.redis.lettuce.cluster.refresh.period=5s", "spring.data.redis.timeout=2s",
					"delayed-tasks.key-prefix=" + redis.keyPrefix(), "delayed-tasks.worker.enabled=false",
					"delayed-tasks.scripts.mode=functions");
	}

	@BeforeEach
	void noLibraries() {
		assumeThat(this.cluster.version()).as("Redis Functions need Redis 7").doesNotStartWith("6.");
		for (RedisProcess master : this.cluster.masters()) {
			onMaster(master, (connection) -> connection.sync().functionFlush(FlushMode.SYNC));
		}
	}

	@Test
	void anApplicationAllowedToLoadTheLibraryLoadsItOnEveryMaster() {
		this.runner.withPropertyValues("delayed-tasks.scripts.load-library=true").run((context) -> {
			assertThat(context).hasNotFailed();
			for (RedisProcess master : this.cluster.masters()) {
				assertThat(libraries(master)).as(master.address()).containsExactly(this.library.name());
			}
			scheduleOnEveryQueue(context.getBean(DelayedTaskScheduler.class));
		});
	}

	@Test
	void oneMasterWithoutTheLibraryStopsStartupAndOneThatLosesItFailsOnlyItsOwnQueues() {
		List<RedisProcess> masters = this.cluster.masters();
		for (RedisProcess master : masters.subList(0, 2)) {
			onMaster(master, (connection) -> connection.sync().functionLoad(this.library.text()));
		}
		this.runner.run((context) -> assertThat(context).getFailure()
			.isInstanceOf(DelayedTaskException.class)
			.hasMessageContaining("Redis has no function library " + this.library.name() + " on ")
			.hasMessageContaining(":" + masters.get(2).port() + " (")
			.hasMessageContaining("redis-cli -h ")
			.hasMessageContaining(" -p " + masters.get(2).port() + " --user <admin>"));
		onMaster(masters.get(2), (connection) -> connection.sync().functionLoad(this.library.text()));
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduleOnEveryQueue(scheduler);
			RedisProcess ordersMaster = this.cluster.masterOf(8578);
			onMaster(ordersMaster, (connection) -> connection.sync().functionFlush(FlushMode.SYNC));
			assertThatExceptionOfType(TaskStoreException.class)
				.isThrownBy(() -> scheduler.enqueue("orders", new Job("ok")))
				.withMessageContaining("Redis has no function");
			for (String queue : List.of("cl-bills", "mails")) {
				TaskId id = scheduler.enqueue(queue, new Job("ok"));
				assertThat(scheduler.find(queue, id)).as(queue).isPresent();
			}
		});
	}

	private void scheduleOnEveryQueue(DelayedTaskScheduler scheduler) {
		for (String queue : QUEUES) {
			TaskId id = scheduler.enqueue(queue, new Job("ok"));
			assertThat(scheduler.find(queue, id)).as(queue).isPresent();
		}
	}

	private List<String> libraries(RedisProcess master) {
		return onMaster(master,
				(connection) -> connection.sync()
					.functionList()
					.stream()
					.map((library) -> String.valueOf(library.get("library_name")))
					.toList());
	}

	private <T> T onMaster(RedisProcess master, Function<StatefulRedisConnection<String, String>, T> action) {
		RedisClient client = RedisClient.create(master.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return action.apply(connection);
		}
		finally {
			client.shutdown();
		}
	}

}

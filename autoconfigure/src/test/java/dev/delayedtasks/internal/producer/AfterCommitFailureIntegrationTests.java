package dev.delayedtasks.internal.producer;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.autoconfigure.DelayedTasksMetricsAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksSnapshotsAutoConfiguration;
import dev.delayedtasks.internal.producer.TransactionalApp.RecordingListener;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sends that fail after the commit, for real, on the test's own {@code redis-server}:
 * killed inside the transaction, so the commit succeeds and the send that follows it
 * cannot reach Redis; or reached as a user whose ACL denies one queue's keys. The failure
 * is logged, counted and reported to the listener, the commit stands, and the other
 * queues' tasks are still sent.
 */
@WithRedis(privateServer = true)
@ExtendWith(OutputCaptureExtension.class)
class AfterCommitFailureIntegrationTests {

	private static final String PASSWORD = "after-commit-test-password";

	private final TestRedis redis;

	AfterCommitFailureIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void aSendThatFailsAfterTheCommitIsLoggedCountedAndReported(CapturedOutput output) {
		assertThat(this.redis.server()).as("the test kills a redis-server process started by this JVM")
			.isInstanceOf(RedisProcess.class);
		RedisProcess server = (RedisProcess) this.redis.server();
		TransactionalApp.runner(this.redis, "spring.data.redis.timeout=500ms")
			.withConfiguration(AutoConfigurations.of(DelayedTasksSnapshotsAutoConfiguration.class,
					MetricsAutoConfiguration.class, DelayedTasksMetricsAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
				RecordingListener listener = context.getBean(RecordingListener.class);
				AtomicReference<ScheduleResult> result = new AtomicReference<>();
				AtomicLong committing = new AtomicLong();
				long returned;
				try {
					context.getBean(TransactionTemplate.class).executeWithoutResult((status) -> {
						jdbc.update("INSERT INTO orders (id) VALUES (?)", "order-7");
						result.set(scheduler.submit(TaskRequest.of("receipts", "order-7").afterCommit()));
						server.kill();
						committing.set(System.nanoTime());
					});
					returned = System.nanoTime();
				}
				finally {
					server.restart();
				}
				// One queue, one batch: the failed send holds the committing thread for
				// about one
				// command timeout.
				long commitAndFailedSendMs = TimeUnit.NANOSECONDS.toMillis(returned - committing.get());
				System.out.println("after_commit_failed_send_ms=" + commitAndFailedSendMs);
				assertThat(commitAndFailedSendMs).isLessThan(5_000);
				assertThat(result.get().pending()).isTrue();
				assertThat(jdbc.queryForList("SELECT id FROM orders", String.class)).containsExactly("order-7");
				assertThat(listener.failed).singleElement().satisfies((failure) -> {
					assertThat(failure.queue()).isEqualTo("receipts");
					assertThat(failure.id()).isEqualTo(result.get().id());
					assertThat(failure.failure()).isInstanceOf(TaskStoreException.class);
				});
				assertThat(listener.scheduled).isEmpty();
				assertThat(context.getBean(MeterRegistry.class)
					.get("delayed.tasks.after.commit.failed")
					.tag("queue", "receipts")
					.counter()
					.count()).isEqualTo(1);
				assertThat(output).contains("could not be sent after it to queue 'receipts'")
					.contains(result.get().id().value());
			});
	}

	@Test
	void aQueueWhoseSendIsRefusedAfterTheCommitDoesNotStopTheOthers() {
		// A key prefix of its own: the user may only touch the queue index and one queue.
		String prefix = this.redis.keyPrefix() + "-acl";
		createUser("producer",
				List.of("on", ">" + PASSWORD, "~" + prefix + ":queues", "~" + prefix + ":{allowed:0}:*", "+@all"));
		// In the URL: Spring Boot ignores spring.data.redis.username and password when a
		// URL is set.
		TransactionalApp
			.runner(this.redis,
					"spring.data.redis.url=redis://producer:" + PASSWORD + "@" + this.redis.host() + ":"
							+ this.redis.port(),
					"delayed-tasks.key-prefix=" + prefix)
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				RecordingListener listener = context.getBean(RecordingListener.class);
				AtomicReference<TaskId> denied = new AtomicReference<>();
				AtomicReference<TaskId> allowed = new AtomicReference<>();
				context.getBean(TransactionTemplate.class).executeWithoutResult((status) -> {
					denied.set(scheduler.schedule(TaskRequest.of("denied", "x").afterCommit()));
					allowed.set(scheduler.schedule(TaskRequest.of("allowed", "y").afterCommit()));
				});
				assertThat(listener.failed).singleElement().satisfies((failure) -> {
					assertThat(failure.queue()).isEqualTo("denied");
					assertThat(failure.id()).isEqualTo(denied.get());
					assertThat(failure.failure()).hasMessageContaining("NOPERM");
				});
				assertThat(scheduler.find("allowed", allowed.get())).as("sent after the refused queue's batch")
					.isPresent();
				assertThat(listener.scheduled).extracting(ScheduleResult::id).containsExactly(allowed.get());
			});
	}

	private void createUser(String name, List<String> rules) {
		RedisClient client = RedisClient.create(this.redis.uri());
		try (StatefulRedisConnection<String, String> admin = client.connect()) {
			CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8).add("SETUSER")
				.add(name)
				.add("reset");
			rules.forEach(args::add);
			assertThat(admin.sync().dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8), args))
				.isEqualTo("OK");
		}
		finally {
			client.shutdown();
		}
	}

}

package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "an outcome belongs to one incarnation; a previous outcome is never reported for it". A
 * tracked request that waits for its commit is awaited from the {@code track} call on,
 * while the previous incarnation's outcome record is still in Redis (the enqueue at the
 * commit deletes it).
 */
@WithRedis(privateServer = true)
class TrackedAfterCommitIncarnationIntegrationTests {

	private static final String QUEUE = "wd-track";

	private final ApplicationContextRunner runner;

	private final TestRedis redis;

	TrackedAfterCommitIncarnationIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = TransactionalApp.runner(redis);
	}

	private void killPubSubConnections() {
		RedisClient client = RedisClient.create(this.redis.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			assertThat(connection.sync().clientKill(KillArgs.Builder.typePubsub())).isPositive();
		}
		finally {
			client.shutdown();
		}
	}

	/** Another caller's awaitOutcome of the same id during the transaction. */
	@Test
	void anotherCallersAwaitOfTheEndedPreviousIncarnationDoesNotEndTheNewOne() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TransactionTemplate transaction = context.getBean(TransactionTemplate.class);
			// The previous incarnation: tracked, then cancelled, so its outcome is kept.
			TrackedTask previous = scheduler.track(TaskRequest.of(QUEUE, "old").id("inc-9").delay(Duration.ofHours(1)));
			assertThat(scheduler.cancel(QUEUE, TaskId.of("inc-9"))).isTrue();
			assertThat(previous.await(Duration.ofSeconds(5))).isPresent();
			AtomicReference<TrackedTask> tracked = new AtomicReference<>();
			AtomicReference<Optional<TaskOutcome>> otherCaller = new AtomicReference<>();
			transaction.executeWithoutResult((status) -> {
				tracked.set(scheduler
					.track(TaskRequest.of(QUEUE, "new").id("inc-9").delay(Duration.ofHours(1)).afterCommit()));
				// Another thread asks how inc-9 ended: the earlier incarnation's outcome,
				// rightly for it.
				otherCaller.set(CompletableFuture
					.supplyAsync(() -> scheduler.awaitOutcome(QUEUE, TaskId.of("inc-9"), Duration.ofMillis(500)))
					.join());
			});
			assertThat(scheduler.find(QUEUE, TaskId.of("inc-9"))).isPresent();
			assertThat(tracked.get().outcome()).as("the new incarnation is live: no outcome yet").isNotDone();
		});
	}

	/**
	 * A resubscription of the tracker (pub/sub connection killed) during the transaction.
	 */
	@Test
	void aResubscriptionDuringTheTransactionDoesNotEndTheNewIncarnation() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TransactionTemplate transaction = context.getBean(TransactionTemplate.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			TrackedTask previous = scheduler
				.track(TaskRequest.of(QUEUE, "old").id("inc-10").delay(Duration.ofHours(1)));
			assertThat(scheduler.cancel(QUEUE, TaskId.of("inc-10"))).isTrue();
			assertThat(previous.await(Duration.ofSeconds(5))).isPresent();
			AtomicReference<TrackedTask> tracked = new AtomicReference<>();
			transaction.executeWithoutResult((status) -> {
				tracked.set(scheduler
					.track(TaskRequest.of(QUEUE, "new").id("inc-10").delay(Duration.ofHours(1)).afterCommit()));
				// A network blip on the tracker's pub/sub connection.
				killPubSubConnections();
				try {
					Thread.sleep(2000);
				}
				catch (InterruptedException ex) {
					throw new IllegalStateException(ex);
				}
			});
			assertThat(scheduler.find(QUEUE, TaskId.of("inc-10"))).isPresent();
			assertThat(tracked.get().outcome()).as("the new incarnation is live: no outcome yet").isNotDone();
		});
	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskOutcome.Kind;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.worker.CrashTestWorker.CrashJob;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tracking with the producer and the worker in different JVMs: the outcome reaches the
 * producer through a killed Pub/Sub connection, two producer JVMs tracking the same tasks
 * are both told, and a producer killed with SIGKILL leaves nothing behind once its tasks'
 * outcomes have expired, while a restarted producer reads them until then.
 */
@WithRedis(privateServer = true)
class TrackingProcessIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final Duration TRACKED_RETENTION = Duration.ofSeconds(4);

	private final TestRedis redis;

	private final ApplicationContextRunner producer;

	TrackingProcessIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.producer = ShortLeases.runner(redis, "delayed-tasks.worker.enabled=false",
				"delayed-tasks.results.tracked-retention=" + TRACKED_RETENTION.toMillis() + "ms");
	}

	@Test
	void aTaskRunInAnotherJvmCompletesItsTrackerHereThroughAKilledConnection() throws Exception {
		String queue = "track-across";
		try (ChildWorker worker = ChildWorker.start("worker", this.redis, queue, 2)) {
			this.producer.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				TrackedTask tracked = scheduler.track(TaskRequest.of(queue, new CrashJob(7, 1500)));
				await().atMost(WAIT).until(() -> worker.ids("@@STARTED ").contains(tracked.id().value()));

				// The producer's subscription is cut while the other JVM runs the task.
				assertThat(killPubSubClients()).isPositive();

				TaskOutcome outcome = tracked.await(WAIT).orElseThrow();
				assertThat(worker.ids("@@DONE ")).contains(tracked.id().value());
				assertThat(outcome.kind()).isEqualTo(Kind.SUCCEEDED);
				assertThat(outcome.runs()).isEqualTo(1);
				assertThat(outcome.result(String.class)).contains("done 7");
			});
		}
	}

	@Test
	void twoJvmsTrackingTheSameTasksAreBothToldWhenEachEnds() throws Exception {
		String queue = "track-two-jvms";
		List<String> arguments = List.of("--track.queue=" + queue, "--track.count=5", "--track.id-prefix=shared");
		try (ChildWorker first = ChildWorker.startMain("first", this.redis, TrackingProducer.class, "@@READY",
				arguments, "delayed-tasks.worker.enabled=false");
				ChildWorker second = ChildWorker.startMain("second", this.redis, TrackingProducer.class, "@@READY",
						arguments, "delayed-tasks.worker.enabled=false")) {
			Set<String> ids = first.ids("@@TRACKED ");
			assertThat(ids).hasSize(5);
			// The second sent the same ids again (EXISTING) and waits for the same tasks.
			assertThat(second.ids("@@TRACKED ")).isEqualTo(ids);
			await().atMost(WAIT).until(() -> trackerChannels().size() == 2);
			// Handlers start only now: both producers wait before any task ends.
			try (ChildWorker worker = ChildWorker.start("worker", this.redis, queue, 5)) {
				await().atMost(WAIT).until(() -> worker.ids("@@DONE ").containsAll(ids));
				for (ChildWorker producer : List.of(first, second)) {
					await().atMost(WAIT).untilAsserted(() -> assertThat(producer.ids("@@OUTCOME ")).isEqualTo(ids));
					assertThat(producer.events("@@OUTCOME ")).allSatisfy((outcome) -> {
						assertThat(outcome[1]).isEqualTo("SUCCEEDED");
						assertThat(outcome[2]).isEqualTo("1");
					});
				}
			}
		}
	}

	@Test
	void aProducerKilledWithSigkillLeavesNothingBehindOnceItsOutcomesExpire() throws Exception {
		String queue = "track-killed";
		PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
		Set<String> tracked;
		try (ChildWorker producer = ChildWorker.startMain("producer", this.redis, TrackingProducer.class, "@@READY",
				List.of("--track.queue=" + queue, "--track.count=3"), "delayed-tasks.worker.enabled=false",
				"delayed-tasks.results.tracked-retention=" + TRACKED_RETENTION.toMillis() + "ms")) {
			tracked = producer.ids("@@TRACKED ");
			assertThat(tracked).hasSize(3);
			await().atMost(WAIT).until(() -> trackerChannels().size() == 1);
			producer.kill();
		}
		// Redis drops the dead process's subscription: nothing listens any more.
		await().atMost(WAIT).until(() -> trackerChannels().isEmpty());

		try (ChildWorker worker = ChildWorker.start("worker", this.redis, queue, 3)) {
			await().atMost(WAIT).until(() -> worker.ids("@@DONE ").containsAll(tracked));
		}
		// A producer started again reads the outcomes while they are kept...
		this.producer.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			for (String id : tracked) {
				assertThat(scheduler.outcome(queue, TaskId.of(id))).hasValueSatisfying((outcome) -> {
					assertThat(outcome.kind()).isEqualTo(Kind.SUCCEEDED);
					assertThat(outcome.result(String.class))
						.hasValueSatisfying((result) -> assertThat(result).startsWith("done "));
				});
				assertThat(redis.getExpire(keys.outcome(id), TimeUnit.MILLISECONDS)).isPositive()
					.isLessThanOrEqualTo(TRACKED_RETENTION.toMillis());
			}
			// ...and not after: every key the tracking wrote is gone.
			await().atMost(TRACKED_RETENTION.plus(WAIT))
				.until(() -> tracked.stream().noneMatch((id) -> scheduler.outcome(queue, TaskId.of(id)).isPresent()));
			assertThat(redis.keys(keys.base() + "o:*")).isEmpty();
			assertThat(redis.keys(keys.base() + "t:*")).isEmpty();
			assertThat(redis.keys(this.redis.keyPrefix() + "*tracker*")).isEmpty();
		});
		assertThat(trackerChannels()).isEmpty();
	}

	private List<String> trackerChannels() {
		return withLettuce((connection) -> connection.sync().pubsubChannels(this.redis.keyPrefix() + ":tracker:*"));
	}

	private long killPubSubClients() {
		return withLettuce((connection) -> connection.sync().clientKill(KillArgs.Builder.typePubsub()));
	}

	private <T> T withLettuce(Function<StatefulRedisConnection<String, String>, T> call) {
		RedisClient client = RedisClient.create(this.redis.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return call.apply(connection);
		}
		finally {
			client.shutdown();
		}
	}

}

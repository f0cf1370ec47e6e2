package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskOutcome.Kind;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TrackedTask;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Completion tracking and results on a real Redis: the tracked task's future completes
 * with how it ended (succeeded with the handler's result, dead-lettered, cancelled,
 * expired), outcomes are kept for the configured retention and read from any instance,
 * and an outcome published while the tracker's connection was down is not lost.
 */
@WithRedis
class OutcomeTrackingIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	OutcomeTrackingIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis, "delayed-tasks.retry.max-retries=0")
			.withUserConfiguration(Handlers.class);
	}

	@Test
	void aTrackedTaskCompletesWithTheHandlersResult() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TrackedTask tracked = scheduler.track(TaskRequest.of("out-receipts", new Order("o-7", 3)));

			TaskOutcome outcome = tracked.await(WAIT).orElseThrow();

			assertThat(outcome.kind()).isEqualTo(Kind.SUCCEEDED);
			assertThat(outcome.id()).isEqualTo(tracked.id());
			assertThat(outcome.runs()).isEqualTo(1);
			assertThat(outcome.result(Receipt.class)).contains(new Receipt("o-7", 30));
			assertThat(outcome.resultJson()).hasValueSatisfying((json) -> assertThat(json).contains("\"total\":30"));
			assertThat(outcome.reason()).isEmpty();
			// Kept for the tracked retention: any instance reads it, later too.
			assertThat(scheduler.outcome("out-receipts", tracked.id()))
				.hasValueSatisfying((kept) -> assertThat(kept.result(Receipt.class)).contains(new Receipt("o-7", 30)));
			long ttl = context.getBean(StringRedisTemplate.class)
				.getExpire(keys("out-receipts").outcome(tracked.id().value()), TimeUnit.SECONDS);
			assertThat(ttl).isBetween(3500L, 3600L);
		});
	}

	@Test
	void aTrackedTaskThatFailsCompletesAsDeadLetteredWithItsError() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TrackedTask tracked = scheduler.track(TaskRequest.of("out-failing", new Order("bad", -1)));

			TaskOutcome outcome = tracked.outcome().get(WAIT.toSeconds(), TimeUnit.SECONDS);

			assertThat(outcome.kind()).isEqualTo(Kind.DEAD_LETTERED);
			assertThat(outcome.runs()).isEqualTo(1);
			assertThat(outcome.reason()).contains(FailureReason.NON_RETRYABLE.value());
			assertThat(outcome.exceptionType()).contains(NonRetryableTaskException.class.getName());
			assertThat(outcome.message()).contains("no such order: bad");
			assertThat(outcome.result(Receipt.class)).isEmpty();
		});
	}

	@Test
	void aCancelledAndAnExpiredTaskCompleteTheirTrackersWithoutRunning() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TrackedTask later = scheduler
				.track(TaskRequest.of("out-receipts", new Order("o-8", 1)).delay(Duration.ofHours(1)));
			assertThat(scheduler.cancel("out-receipts", later.id())).isTrue();
			assertThat(later.await(WAIT)).hasValueSatisfying((outcome) -> {
				assertThat(outcome.kind()).isEqualTo(Kind.CANCELLED);
				assertThat(outcome.runs()).isZero();
			});
			QueueControl control = context.getBean(QueueControl.class);
			control.pause("out-paused");
			TrackedTask stale = scheduler
				.track(TaskRequest.of("out-paused", new Order("o-9", 1)).expireAfter(Duration.ofMillis(200)));
			Thread.sleep(300);
			control.resume("out-paused");
			assertThat(stale.await(WAIT)).hasValueSatisfying((outcome) -> {
				assertThat(outcome.kind()).isEqualTo(Kind.EXPIRED);
				assertThat(outcome.reason()).contains(FailureReason.EXPIRED.value());
			});
			assertThat(context.getBean(Handlers.class).runs).isZero();
		});
	}

	@Test
	void outcomesOfUntrackedTasksAreKeptOnlyForQueuesWithARetention() {
		this.runner.withPropertyValues("delayed-tasks.queues.out-receipts.results.retention=2m").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId kept = scheduler.enqueue("out-receipts", new Order("o-1", 2));
			TaskId notKept = scheduler.enqueue("out-plain", new Order("o-2", 2));
			await().atMost(WAIT).until(() -> scheduler.outcome("out-receipts", kept).isPresent());
			await().atMost(WAIT).until(() -> context.getBean(Handlers.class).plainRuns == 1);
			assertThat(scheduler.outcome("out-receipts", kept).orElseThrow().result(Receipt.class))
				.contains(new Receipt("o-1", 20));
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			assertThat(redis.getExpire(keys("out-receipts").outcome(kept.value()), TimeUnit.SECONDS)).isBetween(100L,
					120L);
			assertThat(scheduler.outcome("out-plain", notKept)).isEmpty();
			assertThat(redis.hasKey(keys("out-plain").outcome(notKept.value()))).isFalse();
		});
	}

	@Test
	void awaitOutcomeTracksATaskThatAnotherInstanceScheduled() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			Handlers handlers = context.getBean(Handlers.class);
			handlers.hold = new CountDownLatch(1);
			TaskId id = scheduler.enqueue("out-receipts", new Order("o-3", 5));
			await().atMost(WAIT).until(() -> handlers.running == 1);
			Thread release = new Thread(() -> {
				sleep(300);
				handlers.hold.countDown();
			});
			release.start();

			Optional<TaskOutcome> outcome = scheduler.awaitOutcome("out-receipts", id, WAIT);

			assertThat(outcome).hasValueSatisfying(
					(ended) -> assertThat(ended.result(Receipt.class)).contains(new Receipt("o-3", 50)));
			// Ended and kept: answered at once.
			assertThat(scheduler.awaitOutcome("out-receipts", id, Duration.ZERO)).isPresent();
			assertThat(scheduler.awaitOutcome("out-receipts", TaskId.of("never-scheduled"), WAIT)).isEmpty();
		});
	}

	@Test
	void anOutcomeWhoseMessageWasLostIsReadWhenTheTrackerSubscribesAgain() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			Handlers handlers = context.getBean(Handlers.class);
			handlers.hold = new CountDownLatch(1);
			TrackedTask tracked = scheduler.track(TaskRequest.of("out-receipts", new Order("o-4", 1)));
			await().atMost(WAIT).until(() -> handlers.running == 1);
			// As if the tracker were disconnected when the task ends: its message goes
			// to a channel nobody hears, so only the kept record tells.
			context.getBean(StringRedisTemplate.class)
				.opsForHash()
				.put(keys("out-receipts").task(tracked.id().value()), "tn", "nobody-listens");
			handlers.hold.countDown();
			await().atMost(WAIT).until(() -> scheduler.outcome("out-receipts", tracked.id()).isPresent());
			assertThat(tracked.await(Duration.ofMillis(500))).isEmpty();

			// The tracker's connection drops; Lettuce reconnects and subscribes again.
			killPubSubConnections();

			assertThat(tracked.await(WAIT)).hasValueSatisfying(
					(outcome) -> assertThat(outcome.result(Receipt.class)).contains(new Receipt("o-4", 10)));
		});
	}

	@Test
	void recordsThatCannotBeReadDoNotKeepTheOthersFromBeingReadWhenTheTrackerSubscribesAgain() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			for (int i = 0; i < 20; i++) {
				TrackedTask unreadable = scheduler
					.track(TaskRequest.of("out-receipts", new Order("u-" + i, 1)).delay(Duration.ofHours(1)));
				redis.opsForValue().set(keys("out-receipts").outcome(unreadable.id().value()), "not a hash");
			}
			TrackedTask readable = scheduler
				.track(TaskRequest.of("out-receipts", new Order("r-1", 1)).delay(Duration.ofHours(1)));
			// Its end is published where nobody listens: only the record tells.
			redis.opsForHash().put(keys("out-receipts").task(readable.id().value()), "tn", "nobody-listens");
			assertThat(scheduler.cancel("out-receipts", readable.id())).isTrue();
			assertThat(readable.await(Duration.ofMillis(500))).isEmpty();

			killPubSubConnections();

			assertThat(readable.await(WAIT))
				.hasValueSatisfying((outcome) -> assertThat(outcome.kind()).isEqualTo(Kind.CANCELLED));
		});
	}

	@Test
	void aResubscriptionOnTheEventLoopThatServesTheCommandsDoesNotBlockIt() {
		// One I/O thread: the Pub/Sub connection and the command connection share it, so
		// a read of the records on the thread that delivers the subscription event would
		// wait for a reply only that thread can deliver.
		ClientResources oneIoThread = DefaultClientResources.builder()
			.ioThreadPoolSize(1)
			.computationThreadPoolSize(1)
			.build();
		try {
			this.runner.withBean(ClientResources.class, () -> oneIoThread)
				.withPropertyValues("spring.data.redis.timeout=5s", "delayed-tasks.queues.out-receipts.concurrency=16")
				.run((context) -> {
					DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
					Handlers handlers = context.getBean(Handlers.class);
					handlers.hold = new CountDownLatch(1);
					TrackedTask tracked = scheduler.track(TaskRequest.of("out-receipts", new Order("o-5", 2)));
					await().atMost(WAIT).until(() -> handlers.running == 1);

					killPubSubConnections();
					Thread.sleep(500);
					// Commands on the shared connection still get their replies.
					assertThat(scheduler.find("out-receipts", tracked.id())).isPresent();
					handlers.hold.countDown();

					assertThat(tracked.await(WAIT)).hasValueSatisfying(
							(outcome) -> assertThat(outcome.result(Receipt.class)).contains(new Receipt("o-5", 20)));

					// Many outcomes at once: messages arrive while the tracker still
					// reads
					// earlier records, and handing them over must not wait.
					List<TrackedTask> many = new ArrayList<>();
					for (int i = 0; i < 1000; i++) {
						many.add(scheduler.track(TaskRequest.of("out-receipts", new Order("m-" + i, 1))));
					}
					for (TrackedTask each : many) {
						assertThat(each.await(WAIT)).as("outcome of %s", each.id()).isPresent();
					}
				});
		}
		finally {
			oneIoThread.shutdown();
		}
	}

	@Test
	void aResultThatCannotBeWrittenAsJsonFailsTheRunNamingItsType() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TrackedTask tracked = scheduler.track(TaskRequest.of("out-unwritable", new Order("o-9", 1)));

			TaskOutcome outcome = tracked.await(WAIT).orElseThrow();

			assertThat(outcome.kind()).isEqualTo(Kind.DEAD_LETTERED);
			assertThat(outcome.runs()).isEqualTo(1);
			assertThat(outcome.reason()).contains(FailureReason.NON_RETRYABLE.value());
			assertThat(outcome.message()).hasValueSatisfying(
					(message) -> assertThat(message).contains("The result of type " + Unwritable.class.getName())
						.contains("cannot be written as JSON"));
			assertThat(outcome.resultJson()).isEmpty();
		});
	}

	@Test
	void aResultThatCannotBeKeptFailsTheRunWithAClearReason() {
		this.runner.withPropertyValues("delayed-tasks.results.max-size=16B").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TrackedTask tracked = scheduler.track(TaskRequest.of("out-large", new Order("a-long-order-id", 1)));

			TaskOutcome outcome = tracked.await(WAIT).orElseThrow();

			assertThat(outcome.kind()).isEqualTo(Kind.DEAD_LETTERED);
			assertThat(outcome.reason()).contains(FailureReason.NON_RETRYABLE.value());
			assertThat(outcome.message()).hasValueSatisfying(
					(message) -> assertThat(message).contains("The result of type " + Receipt.class.getName())
						.contains("delayed-tasks.results.max-size (16 bytes)"));
			assertThat(context.getBean(DeadLetters.class).list("out-large", 10)).singleElement()
				.satisfies((letter) -> assertThat(letter.id()).isEqualTo(tracked.id()));
		});
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

	private PartitionKeys keys(String queue) {
		return PartitionKeys.of(this.redis.keyPrefix(), queue);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	record Order(String id, int amount) {
	}

	record Receipt(String order, int total) {
	}

	/** A result Jackson cannot write: its only property throws. */
	record Unwritable(String order) {

		@JsonProperty
		String secret() {
			throw new IllegalStateException("not readable: " + this.order);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		volatile int runs;

		volatile int plainRuns;

		volatile int running;

		volatile CountDownLatch hold = new CountDownLatch(0);

		@DelayedTaskHandler(queue = "out-receipts")
		Receipt receipt(Order order) throws InterruptedException {
			this.runs++;
			this.running++;
			this.hold.await(30, TimeUnit.SECONDS);
			return new Receipt(order.id(), order.amount() * 10);
		}

		@DelayedTaskHandler(queue = "out-large")
		Receipt large(Order order) {
			return new Receipt(order.id(), order.amount());
		}

		@DelayedTaskHandler(queue = "out-unwritable")
		Unwritable unwritable(Order order) {
			return new Unwritable(order.id());
		}

		@DelayedTaskHandler(queue = "out-paused")
		Receipt paused(Order order) {
			this.runs++;
			return new Receipt(order.id(), 0);
		}

		@DelayedTaskHandler(queue = "out-failing")
		void failing(Order order) {
			throw new NonRetryableTaskException("no such order: " + order.id());
		}

		@DelayedTaskHandler(queue = "out-plain")
		void plain(Order order) {
			this.plainRuns++;
		}

	}

}

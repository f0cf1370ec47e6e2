package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * a {@link DelayedTaskListener} that throws a {@link VirtualMachineError} other than a
 * stack overflow ({@link InternalError} here) from {@code expired}, heard on the
 * dispatcher thread in the middle of a claim. handling.md: "A listener that throws, an
 * Error such as StackOverflowError included, is logged and passed over ... so one
 * listener cannot stop a queue".
 */
@WithRedis
class ListenerVmErrorIntegrationTests {

	private static final String QUEUE = "listener-vm-error";

	static final Map<String, Long> STARTED_AT = new ConcurrentHashMap<>();

	static final Map<String, Integer> DELIVERY = new ConcurrentHashMap<>();

	private final TestRedis redis;

	ListenerVmErrorIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void tasksClaimedBesideAnExpiredOneRunAtOnceWhenTheExpiredListenerThrowsAnInternalError() {
		ShortLeases.runner(this.redis, "delayed-tasks.worker.max-claim=8")
			.withUserConfiguration(Handlers.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				QueueControl control = context.getBean(QueueControl.class);
				control.pause(QUEUE);
				scheduler.schedule(TaskRequest.of(QUEUE, "expiring").expireAfter(Duration.ofMillis(200)));
				List<String> good = new ArrayList<>();
				for (int i = 0; i < 3; i++) {
					good.add(scheduler.enqueue(QUEUE, "good-" + i).value());
				}
				Thread.sleep(600);
				long resumed = System.nanoTime();
				control.resume(QUEUE);
				await().atMost(Duration.ofSeconds(15)).until(() -> good.stream().allMatch(STARTED_AT::containsKey));
				Map<String, Long> lateMillis = new HashMap<>();
				good.forEach((id) -> lateMillis.put(id, (STARTED_AT.get(id) - resumed) / 1_000_000));
				System.out.println(
						"listener VM error: ms from resume to start " + lateMillis + "; delivery counts " + DELIVERY);
				assertThat(good).allSatisfy((id) -> {
					assertThat(lateMillis.get(id)).as("ms from resume to the start of %s", id).isLessThan(1000);
					assertThat(DELIVERY.get(id)).as("delivery count of %s", id).isEqualTo(1);
				});
			});
	}

	@Test
	void aFailureRecordedInTheSameBatchAsASuccessWhoseListenerThrowsAnInternalErrorIsStillRecorded() {
		ShortLeases.runner(this.redis).withUserConfiguration(BatchHandlers.class).run((context) -> {
			assertThat(context).hasNotFailed();
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			// The slow listener of "first" keeps the completion thread busy while "ok"
			// and
			// "bad" end, so both are recorded in the next batch.
			scheduler.enqueue(BATCH_QUEUE, "first");
			await().atMost(Duration.ofSeconds(10)).until(() -> BATCH_RUNS.containsKey("first"));
			scheduler.enqueue(BATCH_QUEUE, "ok");
			String bad = scheduler.enqueue(BATCH_QUEUE, "bad").value();
			await().atMost(Duration.ofSeconds(10)).until(() -> BATCH_RUNS.containsKey("bad"));
			Thread.sleep(3000);
			System.out.println("listener VM error (batch): runs after 3 s " + BATCH_RUNS);
			ShortLeases.assertNoFurtherRun(
					() -> assertThat(BATCH_RUNS.get("bad")).as("runs of the non-retryable task").hasValue(1));
			System.out.println("listener VM error (batch): runs " + BATCH_RUNS + "; bad task now "
					+ scheduler.find(BATCH_QUEUE, TaskId.of(bad)));
		});
	}

	static final String BATCH_QUEUE = "listener-vm-batch";

	static final Map<String, AtomicInteger> BATCH_RUNS = new ConcurrentHashMap<>();

	static final Map<String, Boolean> FIRST = new ConcurrentHashMap<>();

	@Test
	void aStartedListenerThrowingAnInternalErrorDoesNotFailTheTask() {
		ShortLeases.runner(this.redis).withUserConfiguration(StartedHandlers.class).run((context) -> {
			assertThat(context).hasNotFailed();
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId id = scheduler.schedule(TaskRequest.of(STARTED_QUEUE, "x").maxAttempts(1));
			Thread.sleep(3000);
			System.out.println("listener VM error (started): handler calls " + STARTED_CALLS + "; task now "
					+ scheduler.find(STARTED_QUEUE, id));
			assertThat(STARTED_CALLS.get()).as("handler calls").isEqualTo(1);
		});
	}

	static final String STARTED_QUEUE = "listener-vm-started";

	static final AtomicInteger STARTED_CALLS = new AtomicInteger();

	@Configuration(proxyBeanMethods = false)
	static class BatchHandlers {

		@DelayedTaskHandler(queue = BATCH_QUEUE, concurrency = "4")
		void handle(String payload, TaskContext context) {
			BATCH_RUNS.computeIfAbsent(payload, (k) -> new AtomicInteger()).incrementAndGet();
			if (payload.equals("bad")) {
				throw new NonRetryableTaskException("bad for good");
			}
		}

		@Bean
		DelayedTaskListener batchListener() {
			return new DelayedTaskListener() {
				@Override
				public void succeeded(TaskContext context, Duration runTime) {
					String payload = context.id().value();
					if (FIRST.putIfAbsent("first", true) == null) {
						try {
							Thread.sleep(1500);
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
						}
						return;
					}
					throw new InternalError("listener bug on " + payload);
				}
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class StartedHandlers {

		@DelayedTaskHandler(queue = STARTED_QUEUE)
		void handle(String payload, TaskContext context) {
			STARTED_CALLS.incrementAndGet();
		}

		@Bean
		DelayedTaskListener startedListener() {
			return new DelayedTaskListener() {
				@Override
				public void started(TaskContext context) {
					throw new InternalError("listener bug in started");
				}
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@DelayedTaskHandler(queue = QUEUE, concurrency = "4")
		void handle(String payload, TaskContext context) {
			STARTED_AT.putIfAbsent(context.id().value(), System.nanoTime());
			DELIVERY.putIfAbsent(context.id().value(), context.deliveryCount());
		}

		@Bean
		DelayedTaskListener throwingListener() {
			return new DelayedTaskListener() {
				@Override
				public void expired(String queue, TaskId id, Instant expiresAt) {
					throw new InternalError("listener bug");
				}
			};
		}

	}

}

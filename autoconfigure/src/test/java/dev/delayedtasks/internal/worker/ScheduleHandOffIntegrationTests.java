package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.EnqueueCall;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.PreparedTask;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskHandoff;
import dev.delayedtasks.internal.store.TaskHandoffs;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A blocking {@code schedule} beside an idle handler of the queue leases the ready task
 * it creates for that handler and hands it over on the calling thread: the task runs
 * without a wake-up and a claim, and every guarantee of a claim holds (fencing by token,
 * no task overtaking one that waits, nothing run while the queue is paused, nothing lost
 * when the call's reply is lost or the handler stops meanwhile).
 */
@WithRedis
class ScheduleHandOffIntegrationTests {

	/**
	 * A hand-off's lease token: the loop's nonce (instance tag, loop number), {@code -h}
	 * and the call's number.
	 */
	private static final String HANDED_OFF = "^[0-9a-f]{8}[0-9a-z]+-h[0-9a-z]+:\\d+$";

	/** A lease that outlasts a test whose tasks must run exactly once. */
	private static final String LONG_LEASE = "delayed-tasks.worker.lease-duration=30s";

	/**
	 * A claim's lease token: the loop's nonce (instance tag, loop number) and the claim's
	 * number.
	 */
	private static final String CLAIMED = "^[0-9a-f]{8}[0-9a-z]+\\.[0-9a-z]+:\\d+$";

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	ScheduleHandOffIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis, "delayed-tasks.worker.block-timeout=300ms")
			.withUserConfiguration(GatedHandler.class);
	}

	@Test
	void aTaskScheduledBesideAnIdleHandlerIsLeasedByItsEnqueueCallAndRunsOnce() {
		String queue = "handoff-idle";
		// A block that outlasts the test: the dispatcher never leaves its wait on its
		// own. A lease no stalled heartbeat of a loaded machine lets run out: a reaped
		// lease is claimed again, which is at-least-once but not what this test is about.
		this.runner
			.withPropertyValues("test.queue=" + queue, "test.gated=false", "delayed-tasks.worker.block-timeout=60s",
					LONG_LEASE)
			.run((context) -> {
				GatedHandler handler = context.getBean(GatedHandler.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				for (int i = 0; i < 20; i++) {
					// Each time the handler has room and its dispatcher waits for work.
					IdleDispatcher.waitFor(context, queue);
					scheduler.schedule(TaskRequest.of(queue, "task " + i));
				}
				await().atMost(Duration.ofSeconds(10)).until(() -> handler.tokens.size() == 20);
				assertThat(handler.tokens.values()).allSatisfy((token) -> assertThat(token).matches(HANDED_OFF));
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
				assertThat(redis.opsForHash().get(keys.stats(), "claimed")).isEqualTo("20");
				ShortLeases.assertNoFurtherRun(() -> assertThat(handler.runs).hasSize(20));
				ShortLeases.assertPartitionEmpty(redis, this.redis, queue);
			});
	}

	@Test
	void aTaskFallingDueBesideAnIdleHandlerIsLeasedByTheTimerOwnersPromotion() {
		String queue = "handoff-due";
		this.runner
			.withPropertyValues("test.queue=" + queue, "test.gated=false", "delayed-tasks.worker.block-timeout=60s",
					LONG_LEASE)
			.run((context) -> {
				GatedHandler handler = context.getBean(GatedHandler.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				QueueWorker worker = (QueueWorker) context.getBean(DelayedTaskHandlerRegistry.class)
					.getHandler(queue + "-handler")
					.orElseThrow();
				await().atMost(Duration.ofSeconds(5)).until(worker::isTimerOwner);
				for (int i = 0; i < 5; i++) {
					IdleDispatcher.waitFor(context, queue);
					scheduler.schedule(TaskRequest.of(queue, "due " + i).delay(Duration.ofMillis(200)));
					int ran = i + 1;
					await().atMost(Duration.ofSeconds(5)).until(() -> handler.runs.size() == ran);
				}
				assertThat(handler.tokens.values()).allSatisfy((token) -> assertThat(token).matches(HANDED_OFF));
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				ShortLeases.assertPartitionEmpty(redis, this.redis, queue);
			});
	}

	static Stream<Arguments> withoutHandOff() {
		return Stream.of(
				Arguments.of(Named.of("hand-off switched off", "handoff-off"),
						List.of("delayed-tasks.worker.hand-off=false"), List.of()),
				Arguments.of(Named.of("a handler executor of the application's own", "handoff-own-executor"), List.of(),
						List.of(OwnExecutor.class)));
	}

	@ParameterizedTest(name = "{0}: every task is claimed")
	@MethodSource("withoutHandOff")
	void withoutHandOffEveryTaskIsClaimed(String queue, List<String> properties, List<Class<?>> configurations) {
		this.runner.withPropertyValues("test.queue=" + queue, "test.gated=false")
			.withPropertyValues(properties.toArray(String[]::new))
			.withUserConfiguration(configurations.toArray(Class<?>[]::new))
			.run((context) -> {
				GatedHandler handler = context.getBean(GatedHandler.class);
				for (int i = 0; i < 5; i++) {
					context.getBean(DelayedTaskScheduler.class).schedule(TaskRequest.of(queue, "task " + i));
				}
				await().atMost(Duration.ofSeconds(10)).until(() -> handler.tokens.size() == 5);
				assertThat(handler.tokens.values()).allSatisfy((token) -> assertThat(token).matches(CLAIMED));
			});
	}

	@Test
	void aHandedOffTaskNeverOvertakesOneThatWaits() {
		String queue = "handoff-order";
		this.runner.withPropertyValues("test.queue=" + queue, "test.gated=true").run((context) -> {
			GatedHandler handler = context.getBean(GatedHandler.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			IdleDispatcher.waitFor(context, queue);
			// Concurrency 1: A is handed over and holds the only permit, B and C wait in
			// the ready list.
			scheduler.schedule(TaskRequest.of(queue, "A"));
			await().atMost(Duration.ofSeconds(5)).until(() -> handler.runs.contains("A"));
			scheduler.schedule(TaskRequest.of(queue, "B"));
			scheduler.schedule(TaskRequest.of(queue, "C"));
			handler.open("A");
			await().atMost(Duration.ofSeconds(5)).until(() -> handler.runs.contains("B"));
			// C still waits: D must go behind it.
			scheduler.schedule(TaskRequest.of(queue, "D"));
			handler.open("B");
			handler.open("C");
			handler.open("D");
			await().atMost(Duration.ofSeconds(10)).until(() -> handler.runs.size() == 4);
			assertThat(handler.runs).containsExactly("A", "B", "C", "D");
			assertThat(handler.tokens.get("A")).matches(HANDED_OFF);
			assertThat(handler.tokens.get("D")).matches(CLAIMED);
		});
	}

	@Test
	void aPausedQueuesTaskIsNotHandedOver() {
		String queue = "handoff-paused";
		this.runner.withPropertyValues("test.queue=" + queue, "test.gated=false").run((context) -> {
			GatedHandler handler = context.getBean(GatedHandler.class);
			QueueControl control = context.getBean(QueueControl.class);
			IdleDispatcher.waitFor(context, queue);
			control.pause(queue);
			context.getBean(DelayedTaskScheduler.class).schedule(TaskRequest.of(queue, "while paused"));
			Thread.sleep(500);
			assertThat(handler.runs).isEmpty();
			control.resume(queue);
			await().atMost(Duration.ofSeconds(5)).until(() -> handler.runs.size() == 1);
			assertThat(handler.tokens.get("while paused")).matches(CLAIMED);
		});
	}

	@Test
	void aCallWhoseReplyIsLostGivesItsTaskBackLongBeforeTheLeaseEnds() {
		String queue = "handoff-lost";
		// A lease far longer than the wait: only the recovery by nonce can bring it back.
		this.runner
			.withPropertyValues("test.queue=" + queue, "test.gated=false", "delayed-tasks.worker.lease-duration=60s")
			.run((context) -> {
				GatedHandler handler = context.getBean(GatedHandler.class);
				SentCall call = sendWithReservation(context, queue, "lost reply");
				assertThat(EnqueueCall.redisMillis(call.reply())).isPositive();
				// The reply never reached the caller.
				call.reservation().lost();
				await().atMost(Duration.ofSeconds(5)).until(() -> handler.runs.size() == 1);
				assertThat(handler.tokens.get("lost reply")).matches(CLAIMED);
				// Given back without penalty: the run the lost reply would have started
				// does
				// not count as a delivery.
				assertThat(handler.deliveries.get("lost reply")).isEqualTo(1);
			});
	}

	@Test
	void aLostReplyIsGivenBackAtOnceWhileTheDispatcherBlocksOnItsWakeList() {
		String queue = "handoff-lost-blocked";
		// The dispatcher sleeps in BLPOP for 20 s: the scheduling thread must give the
		// task
		// back itself.
		this.runner
			.withPropertyValues("test.queue=" + queue, "test.gated=false", "delayed-tasks.worker.lease-duration=60s",
					"delayed-tasks.worker.block-timeout=20s")
			.run((context) -> {
				GatedHandler handler = context.getBean(GatedHandler.class);
				sendWithReservation(context, queue, "lost while blocked").reservation().lost();
				await().atMost(Duration.ofSeconds(5)).until(() -> handler.runs.size() == 1);
			});
	}

	@Test
	void aReplyLostAfterTheHandlerStoppedIsGivenBackAtOnce() {
		String queue = "handoff-lost-stopped";
		this.runner
			.withPropertyValues("test.queue=" + queue, "test.gated=false", "delayed-tasks.worker.lease-duration=60s")
			.run((context) -> {
				GatedHandler handler = context.getBean(GatedHandler.class);
				SentCall call = sendWithReservation(context, queue, "lost after stop");
				DelayedTaskHandlerRegistry registry = context.getBean(DelayedTaskHandlerRegistry.class);
				registry.getHandler(queue + "-handler").orElseThrow().stop();
				call.reservation().lost();
				registry.getHandler(queue + "-handler").orElseThrow().start();
				await().atMost(Duration.ofSeconds(5)).until(() -> handler.runs.size() == 1);
			});
	}

	@Test
	void aCallWhoseEnvelopesAreWrittenAgainForItIsNotHandedOff() {
		String queue = "handoff-no-envelope";
		// A scheduleAll past batch-bytes drops envelopes and writes them again per call:
		// a
		// hand-off would have to write them a third time, so the tasks are claimed.
		this.runner
			.withPropertyValues("test.queue=" + queue, "test.gated=false", "delayed-tasks.producer.batch-bytes=1B",
					"delayed-tasks.worker.block-timeout=60s")
			.run((context) -> {
				GatedHandler handler = context.getBean(GatedHandler.class);
				IdleDispatcher.waitFor(context, queue);
				context.getBean(DelayedTaskScheduler.class)
					.scheduleAll(List.of(TaskRequest.of(queue, "one"), TaskRequest.of(queue, "two")));
				await().atMost(Duration.ofSeconds(5)).until(() -> handler.runs.size() == 2);
				assertThat(handler.tokens.values()).allSatisfy((token) -> assertThat(token).matches(CLAIMED));
			});
	}

	@Test
	void sixteenSchedulingThreadsAcrossStopStartCyclesRunEveryTaskOnceAndLeaveTheBudgetsWhole() {
		String queue = "handoff-cycles";
		this.runner.withPropertyValues("test.queue=" + queue, "test.gated=false").run((context) -> {
			GatedHandler handler = context.getBean(GatedHandler.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTaskHandlerRegistry registry = context.getBean(DelayedTaskHandlerRegistry.class);
			IdleDispatcher.waitFor(context, queue);
			ExecutorService pool = Executors.newFixedThreadPool(16);
			List<Future<?>> sends = new ArrayList<>();
			for (int t = 0; t < 16; t++) {
				int thread = t;
				sends.add(pool.submit(() -> {
					for (int i = 0; i < 40; i++) {
						scheduler.schedule(TaskRequest.of(queue, "t" + thread + "-" + i));
						if (i % 10 == 0) {
							Thread.sleep(20);
						}
					}
					return null;
				}));
			}
			for (int cycle = 0; cycle < 5; cycle++) {
				Thread.sleep(100);
				registry.getHandler(queue + "-handler").orElseThrow().stop();
				registry.getHandler(queue + "-handler").orElseThrow().start();
			}
			for (Future<?> send : sends) {
				send.get();
			}
			pool.shutdown();
			await().atMost(Duration.ofSeconds(30)).until(() -> handler.tokens.size() == 16 * 40);
			// Whole again: one task at a time can be handed over, as when nothing ever
			// was.
			for (int i = 0; i < 3; i++) {
				IdleDispatcher.waitFor(context, queue);
			}
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			ShortLeases.assertPartitionEmpty(redis, this.redis, queue);
			assertThat(handler.runs).doesNotHaveDuplicates();
		});
	}

	@Test
	void tasksHandedOverAfterTheHandlerStoppedAreGivenBackNotRun() {
		String queue = "handoff-stopped";
		this.runner.withPropertyValues("test.queue=" + queue, "test.gated=false").run((context) -> {
			GatedHandler handler = context.getBean(GatedHandler.class);
			SentCall sent = sendWithReservation(context, queue, "after stop");
			PreparedTask task = sent.task();
			context.getBean(DelayedTaskHandlerRegistry.class).getHandler(queue + "-handler").orElseThrow().stop();
			EnqueueCall call = new EnqueueCall(context.getBean(StoreSettings.class),
					context.getBean(PayloadCodec.class));
			List<EnqueueCall.Outcome> outcomes = call.outcomes(queue, List.of(task), sent.reply());
			assertThat(outcomes.get(0).leaseToken()).matches(HANDED_OFF);
			long now = EnqueueCall.redisMillis(sent.reply());
			sent.reservation().accept(EnqueueCall.handedOff(List.of(task), outcomes, now), now, sent.nanoTime());
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
			assertThat(redis.opsForHash().get(keys.base() + "t:" + task.id().value(), "s")).isEqualTo("R");
			assertThat(redis.opsForList().range(keys.ready(), 0, -1)).containsExactly(task.id().value());
			assertThat(handler.runs).isEmpty();
		});
	}

	@Test
	void aCallLeasesNoMoreThanItsReservationAndTheRestWaitInOrder() {
		String queue = "handoff-max";
		this.runner.withPropertyValues("test.queue=" + queue, "test.gated=true", "test.auto-startup=false")
			.run((context) -> {
				StoreScripts scripts = context.getBean(StoreScripts.class);
				EnqueueCall call = new EnqueueCall(context.getBean(StoreSettings.class),
						context.getBean(PayloadCodec.class));
				List<PreparedTask> tasks = List.of(prepare(context, queue, "one"), prepare(context, queue, "two"),
						prepare(context, queue, "three"));
				TaskHandoff.HandoffLease lease = context.getBean(StoreSettings.class).handoffLease("test.h1", 1);
				List<Object> reply = scripts.runEncoded(Script.ENQUEUE, EnqueueCall.keyCount(3),
						call.encode(queue, tasks, lease), queue, "one");
				List<EnqueueCall.Outcome> outcomes = call.outcomes(queue, tasks, reply);
				assertThat(outcomes).extracting(EnqueueCall.Outcome::leaseToken)
					.satisfiesExactly((token) -> assertThat(token).startsWith("test.h1:"),
							(token) -> assertThat(token).isNull(), (token) -> assertThat(token).isNull());
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
				assertThat(redis.opsForList().range(keys.ready(), 0, -1)).containsExactly(tasks.get(1).id().value(),
						tasks.get(2).id().value());
				assertThat(redis.opsForZSet().score(keys.lease(), tasks.get(0).id().value())).isNotNull();
				assertThat(redis.opsForHash().get(keys.base() + "t:" + tasks.get(0).id().value(), "k"))
					.isEqualTo(outcomes.get(0).leaseToken());
				// A second call finds the ready list full: it leases nothing, whatever it
				// reserved.
				PreparedTask late = prepare(context, queue, "four");
				reply = scripts.runEncoded(Script.ENQUEUE, EnqueueCall.keyCount(1), call.encode(queue, List.of(late),
						context.getBean(StoreSettings.class).handoffLease("test.h2", 4)), queue, "four");
				assertThat(call.outcomes(queue, List.of(late), reply).get(0).leaseToken()).isNull();
			});
	}

	private static PreparedTask prepare(AssertableApplicationContext context, String queue, String payload) {
		return PreparedTask.of(TaskRequest.of(queue, payload), context.getBean(PayloadCodec.class), (name) -> 3);
	}

	/**
	 * Wait until the queue's dispatcher is idle, reserve its room for one task, and send
	 * an {@code enqueue} call of one new task that leases it under that reservation, as a
	 * blocking {@code schedule} would, leaving the reply to the test.
	 * @param context the application
	 * @param queue the queue
	 * @param payload the task's payload
	 * @return the call
	 */
	private static SentCall sendWithReservation(AssertableApplicationContext context, String queue, String payload) {
		IdleDispatcher.waitFor(context, queue);
		TaskHandoff.Reservation reservation = context.getBean(TaskHandoffs.class).reserve(queue, 1);
		assertThat(reservation).isNotNull();
		PreparedTask task = prepare(context, queue, payload);
		EnqueueCall call = new EnqueueCall(context.getBean(StoreSettings.class), context.getBean(PayloadCodec.class));
		long sent = System.nanoTime();
		List<Object> reply = context.getBean(StoreScripts.class)
			.runEncoded(Script.ENQUEUE, EnqueueCall.keyCount(1), call.encode(queue, List.of(task), reservation.lease()),
					queue, task.id().value());
		return new SentCall(reservation, task, reply, sent);
	}

	/**
	 * An {@code enqueue} call sent under a reservation.
	 *
	 * @param reservation the room reserved for the task
	 * @param task the task
	 * @param reply the call's reply
	 * @param nanoTime when the call was sent: a lease it took runs from then
	 */
	private record SentCall(TaskHandoff.Reservation reservation, PreparedTask task, List<Object> reply, long nanoTime) {

	}

	@Configuration(proxyBeanMethods = false)
	static class GatedHandler {

		final List<String> runs = new CopyOnWriteArrayList<>();

		final Map<String, String> tokens = new ConcurrentHashMap<>();

		final Map<String, Integer> deliveries = new ConcurrentHashMap<>();

		private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();

		private final boolean gated;

		GatedHandler(Environment environment) {
			this.gated = environment.getProperty("test.gated", Boolean.class, false);
		}

		@DelayedTaskHandler(queue = "${test.queue}", id = "${test.queue}-handler", concurrency = "1",
				autoStartup = "${test.auto-startup:true}")
		void handle(String payload, TaskContext context) throws InterruptedException {
			this.tokens.put(payload, context.leaseToken());
			this.deliveries.put(payload, context.deliveryCount());
			this.runs.add(payload);
			if (this.gated) {
				gate(payload).await(10, TimeUnit.SECONDS);
			}
		}

		void open(String payload) {
			gate(payload).countDown();
		}

		private CountDownLatch gate(String payload) {
			return this.gates.computeIfAbsent(payload, (key) -> new CountDownLatch(1));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnExecutor {

		@Bean(name = DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME, defaultCandidate = false)
		SimpleAsyncTaskExecutor delayedTasksHandlerExecutor() {
			return new SimpleAsyncTaskExecutor("own-handler-");
		}

	}

}

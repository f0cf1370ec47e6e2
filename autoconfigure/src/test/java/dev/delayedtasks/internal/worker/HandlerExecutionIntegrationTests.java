package dev.delayedtasks.internal.worker;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.TaskTimeoutException;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

import org.springframework.aop.Advisor;
import org.springframework.aop.framework.autoproxy.DefaultAdvisorAutoProxyCreator;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.NameMatchMethodPointcutAdvisor;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * How a handler runs a task, end to end on a real Redis and a real Spring context:
 * timing, retries, dead letters, timeouts, payload conversion, context, MDC, listeners,
 * proxies, pause/resume, manual start and retry-policy beans.
 */
@WithRedis
class HandlerExecutionIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	/**
	 * Longer than an idle dispatcher's block (1 s by default): a dispatcher that should
	 * not claim would have claimed by then, on a wake token or when its block ends.
	 */
	private static final Duration IDLE_DISPATCHER = Duration.ofMillis(1500);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	HandlerExecutionIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis, "delayed-tasks.retry.delay=100ms", "delayed-tasks.retry.jitter=0ms")
			.withBean(RunLog.class, RunLog::new)
			.withBean(RecordingListener.class, RecordingListener::new);
	}

	@Test
	void delayedTaskRunsOnceNotBeforeItsDueTimeWithItsHeadersAndCounts() {
		this.runner.withPropertyValues("test.queue=exec-once")
			.withUserConfiguration(BehaviourHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				long before = System.nanoTime();
				ScheduleResult result = scheduler.submit(TaskRequest.of("exec-once", new Command("succeed"))
					.delay(Duration.ofMillis(400))
					.header("tenant", "t-1")
					.header("trace", "abc"));
				await().atMost(WAIT).until(() -> log.size() == 1);
				Run run = log.runs().get(0);
				TaskContext task = run.context();
				assertThat(run.startedNanos() - before).isGreaterThanOrEqualTo(Duration.ofMillis(400).toNanos());
				assertThat(task.id()).isEqualTo(result.id());
				assertThat(task.queue()).isEqualTo("exec-once");
				assertThat(task.attempt()).isEqualTo(1);
				assertThat(task.deliveryCount()).isEqualTo(1);
				assertThat(task.dueAt()).isEqualTo(result.dueAt());
				assertThat(task.startedAt()).isAfterOrEqualTo(task.dueAt());
				assertThat(task.headers()).containsOnly(Map.entry("tenant", "t-1"), Map.entry("trace", "abc"));
				assertThat(task.header("tenant")).isEqualTo("t-1");
				assertThat(task.leaseToken()).isNotBlank();
				assertThat(run.payload()).isEqualTo(new Command("succeed"));
				System.out
					.println("exec-once lateness_ms=" + Duration.between(task.dueAt(), task.startedAt()).toMillis());
				await().atMost(WAIT).until(() -> scheduler.find("exec-once", result.id()).isEmpty());
				ShortLeases.assertNoFurtherRun(() -> assertThat(log.size()).isEqualTo(1));
			});
	}

	@Test
	void delayedTasksStartWithinMillisecondsOfTheirDueTime() {
		// A dispatcher block and a timer TTL of seconds: a task started on a poll instead
		// of at its due time would be seconds late, far beyond what a loaded machine
		// adds.
		this.runner
			.withPropertyValues("test.queue=exec-punctual", "delayed-tasks.worker.block-timeout=5s",
					"delayed-tasks.worker.timer-ttl=6s")
			.withUserConfiguration(BehaviourHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				for (int i = 0; i < 20; i++) {
					scheduler.schedule("exec-punctual", new Command("succeed"), Duration.ofMillis(200 + 47L * i));
				}
				await().atMost(WAIT).until(() -> log.size() == 20);
				assertThat(log.runs())
					.allSatisfy((run) -> assertThat(run.context().startedAt()).isAfterOrEqualTo(run.context().dueAt()));
				List<Long> lateness = log.latenessMillis();
				System.out.println("exec-punctual lateness " + RunLog.describe(lateness));
				// No fixed poll interval decides when a task runs: the 5 s dispatcher
				// block used as a poll would put the median near 2.5 s, a timer
				// re-armed only when it renews its lease (every 2 s) near 1 s.
				assertThat(lateness.get(lateness.size() / 2)).isLessThan(250);
				assertThat(lateness.get(lateness.size() - 1)).isLessThan(1000);
			});
	}

	@Test
	void handlerThatFailsTwiceThenSucceedsRunsThreeTimesWithGrowingBackOff() {
		this.runner.withPropertyValues("test.queue=exec-flaky")
			.withUserConfiguration(BehaviourHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				TaskId id = scheduler.enqueue("exec-flaky", new Command("fail-before-3"));
				await().atMost(WAIT).until(() -> log.size() == 3);
				await().atMost(WAIT).until(() -> scheduler.find("exec-flaky", id).isEmpty());
				ShortLeases.assertNoFurtherRun(() -> assertThat(log.size()).isEqualTo(3));
				List<Run> runs = log.of(id);
				assertThat(runs).extracting((run) -> run.context().attempt()).containsExactly(1, 2, 3);
				assertThat(runs).extracting((run) -> run.context().deliveryCount()).containsExactly(1, 2, 3);
				// Back-off 100 ms, then 100 ms x 2 (Redis time of the claims).
				assertThat(gap(runs.get(0), runs.get(1))).isGreaterThanOrEqualTo(Duration.ofMillis(100));
				assertThat(gap(runs.get(1), runs.get(2))).isGreaterThanOrEqualTo(Duration.ofMillis(200));
				assertThat(context.getBean(DeadLetters.class).count("exec-flaky")).isZero();
			});
	}

	@Test
	void handlerThatAlwaysFailsIsDeadLetteredAfterMaxRetriesPlusOneRuns() {
		this.runner.withPropertyValues("test.queue=exec-always", "delayed-tasks.retry.max-retries=2")
			.withUserConfiguration(BehaviourHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				DeadLetters deadLetters = context.getBean(DeadLetters.class);
				TaskId id = scheduler.enqueue("exec-always", new Command("always"));
				await().atMost(WAIT).until(() -> deadLetters.count("exec-always") == 1);
				ShortLeases.assertNoFurtherRun(() -> assertThat(log.of(id)).hasSize(3));
				assertThat(log.of(id)).extracting((run) -> run.context().attempt()).containsExactly(1, 2, 3);
				List<DeadLetter> letters = deadLetters.list("exec-always", 10);
				assertThat(letters).singleElement().satisfies((letter) -> {
					assertThat(letter.id()).isEqualTo(id);
					assertThat(letter.queue()).isEqualTo("exec-always");
					assertThat(letter.reason()).isEqualTo("retries-exhausted");
					assertThat(letter.exceptionType()).isEqualTo(IllegalStateException.class.getName());
					assertThat(letter.message()).isEqualTo("always failing, attempt 3");
					assertThat(letter.attempts()).isEqualTo(3);
				});
				assertThat(scheduler.find("exec-always", id)).hasValueSatisfying((info) -> {
					assertThat(info.state()).isEqualTo(TaskState.DEAD);
					assertThat(info.failures()).isEqualTo(3);
					assertThat(info.maxAttempts()).isEqualTo(3);
				});
			});
	}

	@Test
	void nonRetryableTaskExceptionIsDeadLetteredAfterOneRun() {
		this.runner.withPropertyValues("test.queue=exec-fatal")
			.withUserConfiguration(BehaviourHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				DeadLetters deadLetters = context.getBean(DeadLetters.class);
				TaskId id = context.getBean(DelayedTaskScheduler.class)
					.enqueue("exec-fatal", new Command("non-retryable"));
				await().atMost(WAIT).until(() -> deadLetters.count("exec-fatal") == 1);
				ShortLeases.assertNoFurtherRun(() -> assertThat(log.of(id)).hasSize(1));
				assertThat(deadLetters.list("exec-fatal", 10)).singleElement().satisfies((letter) -> {
					assertThat(letter.id()).isEqualTo(id);
					assertThat(letter.reason()).isEqualTo("non-retryable");
					assertThat(letter.exceptionType()).isEqualTo(NonRetryableTaskException.class.getName());
					assertThat(letter.message()).isEqualTo("cannot ever work, attempt 1");
					assertThat(letter.attempts()).isEqualTo(1);
				});
			});
	}

	@Test
	void excludedExceptionTypesAndTheirSubclassesAreDeadLetteredAfterOneRun() {
		this.runner
			.withPropertyValues("test.queue=exec-nonretryable-types", "delayed-tasks.retry.max-retries=1",
					"delayed-tasks.retry.exception-excludes=java.lang.IllegalArgumentException")
			.withUserConfiguration(BehaviourHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				DeadLetters deadLetters = context.getBean(DeadLetters.class);
				TaskId configured = scheduler.enqueue("exec-nonretryable-types", new Command("number-format"));
				TaskId other = scheduler.enqueue("exec-nonretryable-types", new Command("always"));
				await().atMost(WAIT).until(() -> deadLetters.count("exec-nonretryable-types") == 2);
				ShortLeases.assertNoFurtherRun(() -> {
					assertThat(log.of(configured)).hasSize(1);
					assertThat(log.of(other)).hasSize(2);
				});
				assertThat(deadLetters.list("exec-nonretryable-types", 10)).anySatisfy((letter) -> {
					assertThat(letter.id()).isEqualTo(configured);
					assertThat(letter.reason()).isEqualTo("non-retryable");
					assertThat(letter.exceptionType()).isEqualTo(NumberFormatException.class.getName());
					assertThat(letter.message()).isEqualTo("not a number");
					assertThat(letter.attempts()).isEqualTo(1);
				}).anySatisfy((letter) -> {
					assertThat(letter.id()).isEqualTo(other);
					assertThat(letter.reason()).isEqualTo("retries-exhausted");
				});
			});
	}

	@Test
	void aQueueThatIncludesExceptionTypesRetriesOnlyThoseAndDeadLettersTheOthersAfterOneRun() {
		this.runner
			.withPropertyValues("test.queue=exec-included-types", "delayed-tasks.retry.max-retries=1",
					"delayed-tasks.queues.exec-included-types.retry.exception-includes=java.lang.IllegalStateException")
			.withUserConfiguration(BehaviourHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				DeadLetters deadLetters = context.getBean(DeadLetters.class);
				TaskId notIncluded = scheduler.enqueue("exec-included-types", new Command("number-format"));
				TaskId included = scheduler.enqueue("exec-included-types", new Command("always"));
				await().atMost(WAIT).until(() -> deadLetters.count("exec-included-types") == 2);
				assertThat(log.of(notIncluded)).hasSize(1);
				assertThat(log.of(included)).hasSize(2);
				assertThat(deadLetters.list("exec-included-types", 10)).anySatisfy((letter) -> {
					assertThat(letter.id()).isEqualTo(notIncluded);
					assertThat(letter.reason()).isEqualTo(FailureReason.NON_RETRYABLE.value());
				}).anySatisfy((letter) -> {
					assertThat(letter.id()).isEqualTo(included);
					assertThat(letter.reason()).isEqualTo(FailureReason.RETRIES_EXHAUSTED.value());
				});
			});
	}

	@Test
	void handlerThatExceedsItsTimeoutIsInterruptedAndTheRunCountsAsAFailure() {
		this.runner.withPropertyValues("delayed-tasks.queues.exec-timeout.retry.max-retries=1")
			.withUserConfiguration(TimeoutHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				RecordingListener listener = context.getBean(RecordingListener.class);
				DeadLetters deadLetters = context.getBean(DeadLetters.class);
				TaskId id = context.getBean(DelayedTaskScheduler.class).enqueue("exec-timeout", new Command("sleep"));
				// The listener hears of the dead letter just after it is written.
				await().atMost(WAIT)
					.until(() -> deadLetters.count("exec-timeout") == 1 && listener.failures(id).size() == 2);
				List<Run> runs = log.of(id);
				assertThat(runs).hasSize(2).allSatisfy((run) -> {
					assertThat(run.wasInterrupted()).isTrue();
					// Cut near its 300 ms timeout, far from the 10 s the handler would
					// sleep.
					assertThat(Duration.ofNanos(run.finishedNanos() - run.startedNanos()))
						.isBetween(Duration.ofMillis(250), Duration.ofSeconds(5));
				});
				assertThat(runs).extracting((run) -> run.context().attempt()).containsExactly(1, 2);
				assertThat(listener.failures(id)).hasSize(2)
					.allSatisfy((failure) -> assertThat(failure).isInstanceOf(TaskTimeoutException.class)
						.hasMessageContaining("timeout"));
				assertThat(deadLetters.list("exec-timeout", 10)).singleElement().satisfies((letter) -> {
					assertThat(letter.reason()).isEqualTo("retries-exhausted");
					assertThat(letter.exceptionType()).isEqualTo(TaskTimeoutException.class.getName());
					assertThat(letter.message()).contains("timeout");
					assertThat(letter.attempts()).isEqualTo(2);
				});
			});
	}

	@Test
	void handlerThatIgnoresInterruptionKeepsItsLeaseAndPermitUntilItReallyReturns() {
		this.runner.withPropertyValues("delayed-tasks.queues.exec-stubborn.retry.max-retries=0")
			.withUserConfiguration(StubbornHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				DeadLetters deadLetters = context.getBean(DeadLetters.class);
				// Runs 3 s, past its 300 ms timeout and past the 2 s lease.
				TaskId stubborn = scheduler.enqueue("exec-stubborn", new Command("stubborn"));
				TaskId next = scheduler.enqueue("exec-stubborn", new Command("succeed"));
				await().atMost(WAIT).until(() -> deadLetters.count("exec-stubborn") == 1 && log.of(next).size() == 1);
				ShortLeases.assertNoFurtherRun(() -> assertThat(log.size()).isEqualTo(2));
				Run stubbornRun = log.of(stubborn).get(0);
				assertThat(log.of(stubborn)).hasSize(1);
				assertThat(stubbornRun.wasInterrupted()).isTrue();
				assertThat(stubbornRun.isFinished()).isTrue();
				// Concurrency 1 stays a true bound: the next task waited for the thread
				// to return.
				Run nextRun = log.of(next).get(0);
				assertThat(nextRun.startedNanos()).isGreaterThanOrEqualTo(stubbornRun.finishedNanos());
				// Heartbeats kept the lease: the task was never reaped and redelivered.
				assertThat(nextRun.context().deliveryCount()).isEqualTo(1);
				assertThat(deadLetters.list("exec-stubborn", 10)).singleElement().satisfies((letter) -> {
					assertThat(letter.id()).isEqualTo(stubborn);
					assertThat(letter.exceptionType()).isEqualTo(TaskTimeoutException.class.getName());
					assertThat(letter.attempts()).isEqualTo(1);
				});
			});
	}

	@Test
	void cancellingARunningTaskInterruptsItsHandlerAndDeletesItWithoutRetry() {
		this.runner.withUserConfiguration(TimeoutHandler.class)
			.withPropertyValues("test.timeout=30s", "test.queue=exec-cancel")
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				TaskId id = scheduler.enqueue("exec-cancel", new Command("sleep"));
				await().atMost(WAIT).until(() -> log.size() == 1);
				assertThat(scheduler.cancel("exec-cancel", id)).isFalse();
				assertThat(scheduler.find("exec-cancel", id))
					.hasValueSatisfying((info) -> assertThat(info.cancelRequested()).isTrue());
				// The next heartbeat (every lease / 3) sees the request.
				await().atMost(WAIT).until(() -> log.runs().get(0).wasInterrupted());
				await().atMost(WAIT).until(() -> scheduler.find("exec-cancel", id).isEmpty());
				ShortLeases.assertNoFurtherRun(() -> assertThat(log.size()).isEqualTo(1));
				assertThat(context.getBean(DeadLetters.class).count("exec-cancel")).isZero();
			});
	}

	@Test
	void composedAnnotationDeclaresAHandler() {
		this.runner.withUserConfiguration(ComposedAnnotationHandler.class).run((context) -> {
			RunLog log = context.getBean(RunLog.class);
			TaskId id = context.getBean(DelayedTaskScheduler.class).enqueue("exec-composed", new Command("succeed"));
			await().atMost(WAIT).until(() -> log.size() == 1);
			assertThat(log.of(id)).hasSize(1);
			assertThat(context.getBean(DelayedTaskHandlerRegistry.class).getHandler("composed")).isPresent();
		});
	}

	@Test
	void payloadThatCannotBeConvertedIsDeadLetteredOnItsFirstDelivery() {
		this.runner.withUserConfiguration(CounterHandler.class).run((context) -> {
			CounterHandler handler = context.getBean(CounterHandler.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DeadLetters deadLetters = context.getBean(DeadLetters.class);
			TaskId text = scheduler.enqueue("exec-counter", "not a counter");
			TaskId wrongField = scheduler.enqueue("exec-counter", Map.of("count", "many"));
			TaskId good = scheduler.enqueue("exec-counter", new Counter(7));
			await().atMost(WAIT).until(() -> deadLetters.count("exec-counter") == 2 && handler.counters.size() == 1);
			ShortLeases.assertNoFurtherRun(() -> assertThat(handler.counters).containsExactly(new Counter(7)));
			assertThat(scheduler.find("exec-counter", good)).isEmpty();
			for (TaskId id : List.of(text, wrongField)) {
				assertThat(scheduler.find("exec-counter", id)).hasValueSatisfying((info) -> {
					assertThat(info.state()).isEqualTo(TaskState.DEAD);
					assertThat(info.deliveries()).isEqualTo(1);
				});
			}
			assertThat(deadLetters.list("exec-counter", 10)).hasSize(2).allSatisfy((letter) -> {
				assertThat(letter.reason()).isEqualTo("unreadable-payload");
				assertThat(letter.message()).contains("cannot convert the payload").contains("Counter");
				assertThat(letter.attempts()).isEqualTo(1);
			});
		});
	}

	@Test
	void envelopeThatIsNotJsonIsDeadLetteredOnItsFirstDelivery() {
		this.runner.withPropertyValues("test.queue=exec-envelope")
			.withUserConfiguration(CounterHandler.class)
			.run((context) -> {
				CounterHandler handler = context.getBean(CounterHandler.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				DeadLetters deadLetters = context.getBean(DeadLetters.class);
				TaskId id = scheduler.schedule("exec-envelope", new Counter(1), Duration.ofHours(1));
				context.getBean(StringRedisTemplate.class)
					.opsForValue()
					.set(PartitionKeys.of(this.redis.keyPrefix(), "exec-envelope").payload(id.value()), "{not json");
				assertThat(scheduler.reschedule("exec-envelope", id, Duration.ZERO)).isTrue();
				await().atMost(WAIT).until(() -> deadLetters.count("exec-envelope") == 1);
				assertThat(handler.counters).isEmpty();
				assertThat(deadLetters.list("exec-envelope", 10)).singleElement().satisfies((letter) -> {
					assertThat(letter.id()).isEqualTo(id);
					assertThat(letter.reason()).isEqualTo("unreadable-payload");
					assertThat(letter.message()).contains("not a readable task envelope");
					assertThat(letter.attempts()).isEqualTo(1);
				});
				assertThat(scheduler.find("exec-envelope", id))
					.hasValueSatisfying((info) -> assertThat(info.deliveries()).isEqualTo(1));
			});
	}

	@Test
	void genericPayloadTypesAreConvertedWithTheirTypeArguments() {
		this.runner.withUserConfiguration(GenericHandlers.class).run((context) -> {
			GenericHandlers handlers = context.getBean(GenericHandlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			scheduler.enqueue("exec-items", List.of(new Item("apple", 3), new Item("pear", 5)));
			scheduler.enqueue("exec-shops", Map.of("north", List.of(new Item("fig", 1))));
			await().atMost(WAIT).until(() -> handlers.lists.size() == 1 && handlers.maps.size() == 1);
			assertThat(handlers.lists.get(0)).containsExactly(new Item("apple", 3), new Item("pear", 5))
				.hasOnlyElementsOfType(Item.class);
			assertThat(handlers.maps.get(0)).containsOnlyKeys("north");
			assertThat(handlers.maps.get(0).get("north")).containsExactly(new Item("fig", 1))
				.hasOnlyElementsOfType(Item.class);
		});
	}

	@Test
	void handlerTakingOnlyTheContextReceivesIt() {
		this.runner.withUserConfiguration(ContextOnlyHandler.class).run((context) -> {
			ContextOnlyHandler handler = context.getBean(ContextOnlyHandler.class);
			TaskId id = context.getBean(DelayedTaskScheduler.class)
				.schedule(TaskRequest.of("exec-context-only", new Item("ignored", 0)).header("k", "v"));
			await().atMost(WAIT).until(() -> handler.contexts.size() == 1);
			assertThat(handler.contexts.get(0).id()).isEqualTo(id);
			assertThat(handler.contexts.get(0).queue()).isEqualTo("exec-context-only");
			assertThat(handler.contexts.get(0).headers()).containsOnly(Map.entry("k", "v"));
		});
	}

	@Test
	void mdcCarriesTaskIdQueueAndAttemptWhileTheHandlerRuns() {
		this.runner.withPropertyValues("test.queue=exec-mdc")
			.withUserConfiguration(BehaviourHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				TaskId id = context.getBean(DelayedTaskScheduler.class).enqueue("exec-mdc", new Command("fail-once"));
				await().atMost(WAIT).until(() -> log.size() == 2);
				BehaviourHandler handler = context.getBean(BehaviourHandler.class);
				assertThat(handler.mdc).hasSize(2);
				assertThat(handler.mdc.get(0)).containsEntry("taskId", id.value())
					.containsEntry("queue", "exec-mdc")
					.containsEntry("attempt", "1");
				assertThat(handler.mdc.get(1)).containsEntry("taskId", id.value())
					.containsEntry("queue", "exec-mdc")
					.containsEntry("attempt", "2");
			});
	}

	@Test
	void listenersReceiveStartedSucceededRetriedAndDeadLettered() {
		this.runner.withPropertyValues("test.queue=exec-listen", "delayed-tasks.retry.max-retries=1")
			.withUserConfiguration(BehaviourHandler.class)
			.run((context) -> {
				RecordingListener listener = context.getBean(RecordingListener.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				TaskId once = scheduler.enqueue("exec-listen", new Command("fail-once"));
				TaskId fatal = scheduler.enqueue("exec-listen", new Command("non-retryable"));
				TaskId always = scheduler.enqueue("exec-listen", new Command("always"));
				await().atMost(WAIT)
					.until(() -> listener.events(once).size() == 4 && listener.events(fatal).size() == 2
							&& listener.events(always).size() == 4);
				ShortLeases.assertNoFurtherRun(() -> assertThat(listener.events).hasSize(10));
				assertThat(listener.events(once)).containsExactly("started 1", "retried 1 IllegalStateException",
						"started 2", "succeeded 2");
				assertThat(listener.events(fatal)).containsExactly("started 1",
						"deadLettered 1 non-retryable NonRetryableTaskException");
				assertThat(listener.events(always)).containsExactly("started 1", "retried 1 IllegalStateException",
						"started 2", "deadLettered 2 retries-exhausted IllegalStateException");
				RecordingListener.Retry retry = listener.retries.stream()
					.filter((r) -> r.context().id().equals(once))
					.findFirst()
					.orElseThrow();
				assertThat(retry.nextRunAt()).isAfterOrEqualTo(retry.context().startedAt().plusMillis(100));
				assertThat(listener.runTimes).isNotEmpty().allSatisfy((runTime) -> assertThat(runTime).isPositive());
			});
	}

	@Test
	void handlerOnAClassProxiedBeanIsInvokedThroughTheProxy() {
		this.runner.withUserConfiguration(ClassProxying.class, AuditedHandler.class).run((context) -> {
			assertThat(AopUtils.isCglibProxy(context.getBean(AuditedHandler.class))).isTrue();
			AuditAdvice advice = context.getBean(AuditAdvice.class);
			RunLog log = context.getBean(RunLog.class);
			TaskId id = context.getBean(DelayedTaskScheduler.class).enqueue("exec-audited", new Command("succeed"));
			await().atMost(WAIT).until(() -> log.size() == 1);
			assertThat(log.of(id)).hasSize(1);
			assertThat(advice.calls).containsExactly("handleAudited " + id.value());
		});
	}

	@Test
	void handlerOnAnInterfaceProxiedBeanIsInvokedThroughTheProxy() {
		this.runner.withUserConfiguration(InterfaceProxying.class, AuditedInterfaceHandler.class).run((context) -> {
			assertThat(AopUtils.isJdkDynamicProxy(context.getBean(Audited.class))).isTrue();
			AuditAdvice advice = context.getBean(AuditAdvice.class);
			RunLog log = context.getBean(RunLog.class);
			TaskId id = context.getBean(DelayedTaskScheduler.class)
				.enqueue("exec-audited-interface", new Command("succeed"));
			await().atMost(WAIT).until(() -> log.size() == 1);
			assertThat(advice.calls).containsExactly("handleAudited " + id.value());
		});
	}

	@Test
	void pausedQueueIsNotClaimedAndItsTasksRunAfterResume() {
		this.runner.withPropertyValues("test.queue=exec-pause")
			.withUserConfiguration(BehaviourHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				QueueControl control = context.getBean(QueueControl.class);
				control.pause("exec-pause");
				assertThat(control.isPaused("exec-pause")).isTrue();
				List<TaskId> ids = new ArrayList<>();
				for (int i = 0; i < 3; i++) {
					ids.add(scheduler.enqueue("exec-pause", new Command("succeed")));
				}
				ids.add(scheduler.schedule("exec-pause", new Command("succeed"), Duration.ofMillis(200)));
				// The timer still promotes the delayed one while the queue is paused.
				await().atMost(WAIT)
					.untilAsserted(() -> assertThat(ids)
						.allSatisfy((id) -> assertThat(scheduler.find("exec-pause", id)).map(TaskInfo::state)
							.hasValue(TaskState.READY)));
				// Longer than a dispatcher's block (1 s): not claimed on a wake token nor
				// on a block timeout.
				await().during(IDLE_DISPATCHER).atMost(WAIT).until(() -> log.size() == 0);
				control.resume("exec-pause");
				assertThat(control.isPaused("exec-pause")).isFalse();
				await().atMost(WAIT).until(() -> log.size() == 4);
				assertThat(log.byId()).containsOnlyKeys(ids);
			});
	}

	@Test
	void handlerWithAutoStartupFalseRunsOnlyAfterItIsStartedAndCanBeStoppedAndRestarted() {
		this.runner.withUserConfiguration(LazyHandler.class).run((context) -> {
			RunLog log = context.getBean(RunLog.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DelayedTaskHandlerRegistry registry = context.getBean(DelayedTaskHandlerRegistry.class);
			HandlerContainer handler = registry.getHandler("lazy").orElseThrow();
			assertThat(handler.isRunning()).isFalse();
			assertThat(handler.queue()).isEqualTo("exec-lazy");
			TaskId first = scheduler.enqueue("exec-lazy", new Command("succeed"));
			await().during(IDLE_DISPATCHER).atMost(WAIT).until(() -> log.size() == 0);
			handler.start();
			assertThat(handler.isRunning()).isTrue();
			await().atMost(WAIT).until(() -> log.size() == 1);
			assertThat(log.of(first)).hasSize(1);
			handler.stop();
			assertThat(handler.isRunning()).isFalse();
			TaskId second = scheduler.enqueue("exec-lazy", new Command("succeed"));
			await().during(IDLE_DISPATCHER).atMost(WAIT).until(() -> log.size() == 1);
			handler.start();
			await().atMost(WAIT).until(() -> log.size() == 2);
			assertThat(log.of(second)).hasSize(1);
		});
	}

	@Test
	void retryPolicyBeanSetsTheBackOffAndTheQueuesConfigurationTheMaxAttempts() {
		this.runner
			.withPropertyValues("delayed-tasks.retry.delay=5s", "delayed-tasks.retry.max-retries=3",
					"delayed-tasks.queues.exec-policy.retry.max-retries=1")
			.withUserConfiguration(RetryPolicies.class, PolicyHandler.class)
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				DeadLetters deadLetters = context.getBean(DeadLetters.class);
				TaskId byPolicy = scheduler.enqueue("exec-policy", new Command("always"));
				assertThat(scheduler.find("exec-policy", byPolicy)).map(TaskInfo::maxAttempts).hasValue(2);
				// The request's own max attempts wins over the policy bean; the back-off
				// keeps the policy's last delay.
				TaskId byRequest = scheduler
					.schedule(TaskRequest.of("exec-policy", new Command("always")).maxAttempts(3));
				await().atMost(WAIT).until(() -> deadLetters.count("exec-policy") == 2);
				List<Run> policyRuns = log.of(byPolicy);
				assertThat(policyRuns).hasSize(2);
				// The policy's 300 ms, not the properties' 5 s.
				assertThat(gap(policyRuns.get(0), policyRuns.get(1))).isBetween(Duration.ofMillis(300),
						Duration.ofSeconds(4));
				List<Run> requestRuns = log.of(byRequest);
				assertThat(requestRuns).hasSize(3);
				assertThat(gap(requestRuns.get(1), requestRuns.get(2))).isBetween(Duration.ofMillis(300),
						Duration.ofSeconds(4));
				assertThat(deadLetters.list("exec-policy", 10))
					.allSatisfy((letter) -> assertThat(letter.reason()).isEqualTo("retries-exhausted"));
			});
	}

	@Test
	void retryPolicyBeanDeclaredBesideItsHandlerIsFound() {
		this.runner.withPropertyValues("delayed-tasks.queues.exec-policy-beside.retry.max-retries=5")
			.withUserConfiguration(SelfContainedPolicyHandler.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(DelayedTaskHandlerRegistry.class).getHandlers()).singleElement()
					.satisfies((handler) -> assertThat(handler.retryPolicy()).isSameAs(context.getBean("fiveRetries")));
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				// Not due for a while: a task that ran would be gone before find reads
				// it.
				TaskId id = scheduler.schedule("exec-policy-beside", new Command("succeed"), Duration.ofMinutes(5));
				assertThat(scheduler.find("exec-policy-beside", id).map(TaskInfo::maxAttempts)).hasValue(6);
			});
	}

	private static Duration gap(Run first, Run second) {
		return Duration.between(first.context().startedAt(), second.context().startedAt());
	}

	record Command(String action) {

		void apply(TaskContext context) {
			switch (this.action) {
				case "succeed" -> {
				}
				case "fail-once" -> {
					if (context.attempt() < 2) {
						throw new IllegalStateException("failing once");
					}
				}
				case "fail-before-3" -> {
					if (context.attempt() < 3) {
						throw new IllegalStateException("failing, attempt " + context.attempt());
					}
				}
				case "always" -> throw new IllegalStateException("always failing, attempt " + context.attempt());
				case "non-retryable" ->
					throw new NonRetryableTaskException("cannot ever work, attempt " + context.attempt());
				case "number-format" -> throw new NumberFormatException("not a number");
				default -> throw new IllegalArgumentException(this.action);
			}
		}

	}

	record Counter(int count) {
	}

	record Item(String name, int quantity) {
	}

	/** A handler whose behaviour the payload chooses, on the queue {@code test.queue}. */
	@Configuration(proxyBeanMethods = false)
	static class BehaviourHandler {

		final RunLog log;

		final List<Map<String, String>> mdc = new CopyOnWriteArrayList<>();

		BehaviourHandler(RunLog log) {
			this.log = log;
		}

		@DelayedTaskHandler(queue = "${test.queue}")
		void handle(Command command, TaskContext context) {
			Map<String, String> copy = MDC.getCopyOfContextMap();
			this.mdc.add((copy != null) ? copy : Map.of());
			Run run = this.log.started("a", context, command);
			try {
				command.apply(context);
			}
			finally {
				run.finished();
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TimeoutHandler {

		final RunLog log;

		TimeoutHandler(RunLog log) {
			this.log = log;
		}

		@DelayedTaskHandler(queue = "${test.queue:exec-timeout}", timeout = "${test.timeout:300ms}")
		void handle(Command command, TaskContext context) throws InterruptedException {
			Run run = this.log.started("a", context, command);
			try {
				Thread.sleep(10_000);
				run.finished();
			}
			catch (InterruptedException ex) {
				run.interrupted();
				throw ex;
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class StubbornHandler {

		final RunLog log;

		StubbornHandler(RunLog log) {
			this.log = log;
		}

		@DelayedTaskHandler(queue = "exec-stubborn", timeout = "300ms", concurrency = "1")
		void handle(Command command, TaskContext context) {
			Run run = this.log.started("a", context, command);
			if (command.action().equals("stubborn")) {
				long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
				while (System.nanoTime() < end) {
					try {
						Thread.sleep(Math.max(1, (end - System.nanoTime()) / 1_000_000));
					}
					catch (InterruptedException ex) {
						// ignored on purpose, but noted
						run.interrupted();
					}
				}
			}
			run.finished();
		}

	}

	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@DelayedTaskHandler(queue = "exec-composed", id = "composed")
	@interface ComposedHandler {

	}

	@Configuration(proxyBeanMethods = false)
	static class ComposedAnnotationHandler {

		final RunLog log;

		ComposedAnnotationHandler(RunLog log) {
			this.log = log;
		}

		@ComposedHandler
		void handle(Command command, TaskContext context) {
			this.log.started("a", context, command).finished();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class CounterHandler {

		final List<Counter> counters = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = "${test.queue:exec-counter}")
		void handle(Counter counter) {
			this.counters.add(counter);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class GenericHandlers {

		final List<List<Item>> lists = new CopyOnWriteArrayList<>();

		final List<Map<String, List<Item>>> maps = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = "exec-items")
		void items(List<Item> items, TaskContext context) {
			this.lists.add(items);
		}

		@DelayedTaskHandler("exec-shops")
		void shops(Map<String, List<Item>> byShop) {
			this.maps.add(byShop);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ContextOnlyHandler {

		final List<TaskContext> contexts = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = "exec-context-only")
		void handle(TaskContext context) {
			this.contexts.add(context);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LazyHandler {

		final RunLog log;

		LazyHandler(RunLog log) {
			this.log = log;
		}

		@DelayedTaskHandler(queue = "exec-lazy", id = "lazy", autoStartup = "${test.auto-startup:false}")
		void handle(Command command, TaskContext context) {
			this.log.started("a", context, command).finished();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RetryPolicies {

		@Bean
		RetryPolicy quickRetries() {
			return RetryPolicy.builder().maxRetries(1).delay(Duration.ofMillis(300)).jitter(Duration.ZERO).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PolicyHandler {

		final RunLog log;

		PolicyHandler(RunLog log) {
			this.log = log;
		}

		@DelayedTaskHandler(queue = "exec-policy", retryPolicy = "quickRetries")
		void handle(Command command, TaskContext context) {
			this.log.started("a", context, command).finished();
			command.apply(context);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SelfContainedPolicyHandler {

		@Bean
		RetryPolicy fiveRetries() {
			return RetryPolicy.builder().maxRetries(5).delay(Duration.ofMillis(100)).build();
		}

		@DelayedTaskHandler(queue = "exec-policy-beside", retryPolicy = "fiveRetries")
		void handle(Command command) {
		}

	}

	/** Counts the handler calls that went through the proxy. */
	static final class AuditAdvice implements MethodInterceptor {

		final List<String> calls = new CopyOnWriteArrayList<>();

		@Override
		public Object invoke(MethodInvocation invocation) throws Throwable {
			TaskContext context = (TaskContext) invocation.getArguments()[1];
			this.calls.add(invocation.getMethod().getName() + " " + context.id().value());
			return invocation.proceed();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ClassProxying {

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static AuditAdvice auditAdvice() {
			return new AuditAdvice();
		}

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static Advisor auditAdvisor(AuditAdvice auditAdvice) {
			NameMatchMethodPointcutAdvisor advisor = new NameMatchMethodPointcutAdvisor(auditAdvice);
			advisor.setMappedName("handleAudited");
			return advisor;
		}

		@Bean
		static DefaultAdvisorAutoProxyCreator autoProxyCreator() {
			DefaultAdvisorAutoProxyCreator creator = new DefaultAdvisorAutoProxyCreator();
			creator.setProxyTargetClass(true);
			return creator;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class InterfaceProxying {

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static AuditAdvice auditAdvice() {
			return new AuditAdvice();
		}

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static Advisor auditAdvisor(AuditAdvice auditAdvice) {
			NameMatchMethodPointcutAdvisor advisor = new NameMatchMethodPointcutAdvisor(auditAdvice);
			advisor.setMappedName("handleAudited");
			return advisor;
		}

		@Bean
		static DefaultAdvisorAutoProxyCreator autoProxyCreator() {
			DefaultAdvisorAutoProxyCreator creator = new DefaultAdvisorAutoProxyCreator();
			creator.setProxyTargetClass(false);
			return creator;
		}

	}

	public static class AuditedHandler {

		final RunLog log;

		AuditedHandler(RunLog log) {
			this.log = log;
		}

		@DelayedTaskHandler(queue = "exec-audited")
		public void handleAudited(Command command, TaskContext context) {
			this.log.started("a", context, command).finished();
		}

	}

	interface Audited {

		void handleAudited(Command command, TaskContext context);

	}

	static class AuditedInterfaceHandler implements Audited {

		final RunLog log;

		AuditedInterfaceHandler(RunLog log) {
			this.log = log;
		}

		@Override
		@DelayedTaskHandler(queue = "exec-audited-interface")
		public void handleAudited(Command command, TaskContext context) {
			this.log.started("a", context, command).finished();
		}

	}

	/** Records listener callbacks per task. */
	static final class RecordingListener implements DelayedTaskListener {

		final List<String> events = new CopyOnWriteArrayList<>();

		final List<Retry> retries = new CopyOnWriteArrayList<>();

		final List<Duration> runTimes = new CopyOnWriteArrayList<>();

		final List<Map.Entry<TaskId, Throwable>> failures = new CopyOnWriteArrayList<>();

		@Override
		public void started(TaskContext context) {
			this.events.add(context.id().value() + " started " + context.attempt());
		}

		@Override
		public void succeeded(TaskContext context, Duration runTime) {
			this.runTimes.add(runTime);
			this.events.add(context.id().value() + " succeeded " + context.attempt());
		}

		@Override
		public void retried(TaskContext context, Throwable failure, Instant nextRunAt) {
			this.retries.add(new Retry(context, nextRunAt));
			this.failures.add(Map.entry(context.id(), failure));
			this.events
				.add(context.id().value() + " retried " + context.attempt() + " " + failure.getClass().getSimpleName());
		}

		@Override
		public void deadLettered(TaskContext context, Throwable failure, String reason) {
			this.failures.add(Map.entry(context.id(), failure));
			this.events.add(context.id().value() + " deadLettered " + context.attempt() + " " + reason + " "
					+ failure.getClass().getSimpleName());
		}

		List<String> events(TaskId id) {
			String prefix = id.value() + " ";
			return this.events.stream()
				.filter((event) -> event.startsWith(prefix))
				.map((event) -> event.substring(prefix.length()))
				.toList();
		}

		List<Throwable> failures(TaskId id) {
			return this.failures.stream().filter((e) -> e.getKey().equals(id)).map(Map.Entry::getValue).toList();
		}

		record Retry(TaskContext context, Instant nextRunAt) {
		}

	}

}

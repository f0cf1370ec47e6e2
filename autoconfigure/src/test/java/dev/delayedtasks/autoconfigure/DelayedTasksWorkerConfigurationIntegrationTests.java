package dev.delayedtasks.autoconfigure;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.TaskTimeoutException;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.annotation.DelayedTaskHandlerBeanPostProcessor;
import dev.delayedtasks.internal.worker.HandlerEndpoint;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The worker side of the auto-configuration: the producer-only switch, virtual threads,
 * handler validation at startup, per-queue overrides, and the startup warning about a
 * shutdown timeout that Spring's lifecycle phase would cut short.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class DelayedTasksWorkerConfigurationIntegrationTests {

	private final ApplicationContextRunner runner;

	DelayedTasksWorkerConfigurationIntegrationTests(TestRedis redis) {
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.worker.shutdown-timeout=1s",
					"delayed-tasks.retry.jitter=0ms");
	}

	@Test
	void workerDisabledGivesAProducerOnlyContextThatSchedulesButNeverRunsHandlers() {
		this.runner.withPropertyValues("delayed-tasks.worker.enabled=false", "test.queue=cfg-producer-only")
			.withUserConfiguration(RecordingHandler.class)
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean(DelayedTaskHandlerRegistry.class)
					.doesNotHaveBean(DelayedTaskHandlerBeanPostProcessor.class)
					.hasSingleBean(DelayedTaskScheduler.class)
					.hasSingleBean(DeadLetters.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				ScheduleResult result = scheduler.submit(TaskRequest.of("cfg-producer-only", "hello"));
				assertThat(result.created()).isTrue();
				Thread.sleep(800);
				assertThat(context.getBean(RecordingHandler.class).threads).isEmpty();
				assertThat(scheduler.find("cfg-producer-only", result.id())).hasValueSatisfying((info) -> {
					assertThat(info.state()).isEqualTo(TaskState.READY);
					assertThat(info.deliveries()).isZero();
				});
			});
	}

	@Test
	void handlersRunOnNamedPlatformThreadsByDefault() {
		this.runner.withPropertyValues("test.queue=cfg-platform")
			.withUserConfiguration(RecordingHandler.class)
			.run((context) -> {
				RecordingHandler handler = context.getBean(RecordingHandler.class);
				context.getBean(DelayedTaskScheduler.class).enqueue("cfg-platform", "x");
				await().atMost(Duration.ofSeconds(5)).until(() -> handler.threads.size() == 1);
				assertThat(isVirtual(handler.threads.get(0))).isFalse();
				assertThat(handler.threads.get(0).getName()).startsWith("delayed-tasks-handler-");
			});
	}

	@Test
	void virtualThreadsEnabledRunsHandlersOnVirtualThreads() {
		assumeThat(Runtime.version().feature())
			.as("virtual threads need JDK 21 or later; this is JDK " + Runtime.version().feature())
			.isGreaterThanOrEqualTo(21);
		this.runner.withPropertyValues("spring.threads.virtual.enabled=true", "test.queue=cfg-virtual")
			.withUserConfiguration(RecordingHandler.class)
			.run((context) -> {
				RecordingHandler handler = context.getBean(RecordingHandler.class);
				context.getBean(DelayedTaskScheduler.class).enqueue("cfg-virtual", "x");
				await().atMost(Duration.ofSeconds(5)).until(() -> handler.threads.size() == 1);
				assertThat(isVirtual(handler.threads.get(0))).isTrue();
			});
	}

	@Test
	void virtualThreadsEnabledOnAJdkWithoutThemStillRunsHandlersOnPlatformThreads() {
		assumeThat(Runtime.version().feature()).as("this JDK has virtual threads").isLessThan(21);
		this.runner.withPropertyValues("spring.threads.virtual.enabled=true", "test.queue=cfg-no-virtual")
			.withUserConfiguration(RecordingHandler.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RecordingHandler handler = context.getBean(RecordingHandler.class);
				context.getBean(DelayedTaskScheduler.class).enqueue("cfg-no-virtual", "x");
				await().atMost(Duration.ofSeconds(5)).until(() -> handler.threads.size() == 1);
				assertThat(handler.threads.get(0).getName()).startsWith("delayed-tasks-handler-");
			});
	}

	@Test
	void handlerExecutorAndTaskSchedulerAreBeansThatBackOffToTheApplicationsOwn() {
		this.runner.run((context) -> {
			assertThat(context.getBean(DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME))
				.isInstanceOf(ThreadPoolTaskExecutor.class);
			assertThat(context.getBean(DelayedTaskHandlerRegistry.TASK_SCHEDULER_BEAN_NAME))
				.isInstanceOf(ThreadPoolTaskScheduler.class);
		});
		this.runner.withPropertyValues("test.queue=cfg-own-threads", "delayed-tasks.queues.cfg-own-threads.timeout=5s")
			.withUserConfiguration(RecordingHandler.class, OwnThreads.class)
			.run((context) -> {
				RecordingHandler handler = context.getBean(RecordingHandler.class);
				context.getBean(DelayedTaskScheduler.class).enqueue("cfg-own-threads", "x");
				await().atMost(Duration.ofSeconds(5)).until(() -> handler.threads.size() == 1);
				assertThat(handler.threads.get(0).getName()).startsWith("app-handler-");
				// The run's timeout and the queue's local lease checks.
				assertThat(context.getBean(OwnThreads.class).scheduled.get()).isGreaterThanOrEqualTo(2);
			});
	}

	@Test
	void defaultThreadBeansLeaveTheApplicationsOwnExecutorAndSchedulerAlone() {
		this.runner
			.withConfiguration(
					AutoConfigurations.of(TaskExecutionAutoConfiguration.class, TaskSchedulingAutoConfiguration.class))
			.withUserConfiguration(ExecutorUser.class)
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.hasBean("applicationTaskExecutor")
					.hasBean("taskScheduler")
					.hasBean(DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME)
					.hasBean(DelayedTaskHandlerRegistry.TASK_SCHEDULER_BEAN_NAME);
				ExecutorUser user = context.getBean(ExecutorUser.class);
				assertThat(user.executor).isSameAs(context.getBean("applicationTaskExecutor"));
				assertThat(user.scheduler).isSameAs(context.getBean("taskScheduler"));
			});
	}

	@Test
	void everyThreadOfAQueueIsNamedForItsRoleAndQueue() {
		this.runner.withPropertyValues("test.queue=cfg-named")
			.withUserConfiguration(RecordingHandler.class)
			.run((context) -> {
				RecordingHandler handler = context.getBean(RecordingHandler.class);
				context.getBean(DelayedTaskScheduler.class).enqueue("cfg-named", "x");
				await().atMost(Duration.ofSeconds(5)).until(() -> handler.threads.size() == 1);
				assertThat(liveThreads("cfg-named")).containsOnly("delayed-tasks-dispatcher-cfg-named-1",
						"delayed-tasks-tick-cfg-named-1", "delayed-tasks-timer-cfg-named-1",
						"delayed-tasks-heartbeat-cfg-named-1", "delayed-tasks-complete-cfg-named-1");
				context.close();
				await().atMost(Duration.ofSeconds(3)).until(() -> liveThreads("cfg-named").isEmpty());
			});
	}

	@Test
	void queueControlPausesQueuesOnProducerOnlyInstancesToo() {
		this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			QueueControl control = context.getBean(QueueControl.class);
			control.pause("cfg-paused");
			assertThat(control.isPaused("cfg-paused")).isTrue();
			control.resume("cfg-paused");
			assertThat(control.isPaused("cfg-paused")).isFalse();
		});
	}

	private static List<String> liveThreads(String queue) {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.isAlive() && thread.getName().contains("-" + queue + "-"))
			.map(Thread::getName)
			.toList();
	}

	@Test
	void runningHandlerKeepsAWorkerOnlyApplicationAliveUntilTheContextCloses() {
		this.runner.withPropertyValues("test.queue=cfg-alive")
			.withUserConfiguration(RecordingHandler.class)
			.run((context) -> {
				// A worker-only application has no web server: without a non-daemon
				// thread its JVM would exit as soon as main returns.
				assertThat(liveNonDaemonThreads("cfg-alive")).isNotEmpty();
				context.close();
				await().atMost(Duration.ofSeconds(3)).until(() -> liveNonDaemonThreads("cfg-alive").isEmpty());
			});
	}

	private static List<String> liveNonDaemonThreads(String queue) {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.isAlive() && !thread.isDaemon() && thread.getName().contains(queue))
			.map(Thread::getName)
			.toList();
	}

	static Stream<Arguments> invalidHandlers() {
		return Stream.of(Arguments.of(TwoPayloads.class, "handle", "is not supported: use (P payload)"),
				Arguments.of(ContextFirst.class, "handle", "is not supported: use (P payload)"),
				Arguments.of(NoParameters.class, "handle", "is not supported: use (P payload)"),
				Arguments.of(ThreeParameters.class, "handle", "is not supported: use (P payload)"),
				Arguments.of(StaticMethod.class, "handle", "must not be static"),
				Arguments.of(NoQueue.class, "handle", "name the queue"),
				Arguments.of(InvalidQueueName.class, "handle", "Queue name 'bad queue' is invalid"),
				Arguments.of(ZeroConcurrency.class, "handle", "concurrency '0' must be a whole number of at least 1"),
				Arguments.of(TextConcurrency.class, "handle", "concurrency 'many' must be a whole number"),
				Arguments.of(BadTimeout.class, "handle", "timeout 'soon' must be a positive duration"),
				Arguments.of(NegativeTimeout.class, "handle", "timeout '-1s' must be a positive duration"),
				Arguments.of(BadAutoStartup.class, "handle", "autoStartup 'maybe' must be true or false"),
				Arguments.of(UnknownRetryPolicy.class, "handle",
						"retryPolicy names the bean 'missingPolicy', but there is no such bean"),
				Arguments.of(RetryPolicyOfWrongType.class, "handle",
						"retryPolicy names the bean 'notAPolicy', which is a java.lang.String"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("invalidHandlers")
	void invalidHandlerFailsStartupNamingTheBeanTheMethodAndTheRule(Class<?> handlerClass, String method, String rule) {
		this.runner.withUserConfiguration(Policies.class)
			.withBean("invalidHandler", handlerClass)
			.run((context) -> assertThat(startupFailureMessage(context)).contains("invalidHandler")
				.contains(method)
				.contains(rule));
	}

	@Test
	void twoHandlersForOneQueueFailStartupNamingBoth() {
		this.runner.withBean("firstHandler", DuplicateQueueOne.class)
			.withBean("secondHandler", DuplicateQueueTwo.class)
			.run((context) -> assertThat(startupFailureMessage(context)).contains("firstHandler.handle")
				.contains("secondHandler.handle")
				.contains("'cfg-dup'")
				.contains("one handler per queue"));
	}

	@Test
	void twoHandlersWithOneIdFailStartup() {
		this.runner.withBean("firstHandler", DuplicateIdOne.class)
			.withBean("secondHandler", DuplicateIdTwo.class)
			.run((context) -> assertThat(startupFailureMessage(context)).contains("'shared-id'")
				.contains("handler ids must be unique"));
	}

	@Test
	void perQueuePropertiesSetConcurrencyTimeoutAndRetryOfHandlersThatLeaveThemOpen() {
		this.runner.withPropertyValues("test.queue=cfg-tuned", "delayed-tasks.queues.cfg-tuned.concurrency=3",
				"delayed-tasks.queues.cfg-tuned.timeout=250ms", "delayed-tasks.queues.cfg-tuned.retry.max-retries=1",
				"delayed-tasks.queues.cfg-tuned.retry.delay=150ms", "delayed-tasks.retry.delay=5s")
			.withUserConfiguration(TunableHandler.class)
			.run((context) -> {
				DelayedTaskHandlerRegistry registry = context.getBean(DelayedTaskHandlerRegistry.class);
				HandlerEndpoint endpoint = registry.getEndpoints().iterator().next();
				// The annotation leaves them open; the container factory fills them in.
				assertThat(endpoint.concurrency()).isNull();
				assertThat(endpoint.timeout()).isNull();
				HandlerContainer container = registry.getHandler(endpoint.id()).orElseThrow();
				assertThat(container.concurrency()).isEqualTo(3);
				assertThat(container.timeout()).isEqualTo(Duration.ofMillis(250));
				assertThat(container.retryPolicy().getBackOff().start().nextBackOff()).isEqualTo(150);

				TunableHandler handler = context.getBean(TunableHandler.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				for (int i = 0; i < 6; i++) {
					scheduler.enqueue("cfg-tuned", new Work(200));
				}
				await().atMost(Duration.ofSeconds(5)).until(() -> handler.finished.get() == 6);
				assertThat(handler.maxConcurrent.get()).isEqualTo(3);

				TaskId slow = scheduler.enqueue("cfg-tuned", new Work(5_000));
				assertThat(scheduler.find("cfg-tuned", slow)).map(TaskInfo::maxAttempts).hasValue(2);
				DeadLetters deadLetters = context.getBean(DeadLetters.class);
				long queued = System.nanoTime();
				await().atMost(Duration.ofSeconds(4)).until(() -> deadLetters.count("cfg-tuned") == 1);
				// Two runs cut at 250 ms and one back-off of 150 ms, not the global 5 s.
				assertThat(Duration.ofNanos(System.nanoTime() - queued)).isLessThan(Duration.ofSeconds(3));
				assertThat(deadLetters.list("cfg-tuned", 1)).singleElement().satisfies((letter) -> {
					assertThat(letter.exceptionType()).isEqualTo(TaskTimeoutException.class.getName());
					assertThat(letter.reason()).isEqualTo("retries-exhausted");
					assertThat(letter.attempts()).isEqualTo(2);
				});
			});
	}

	@Test
	void annotationAttributesWinOverPerQueueProperties() {
		this.runner
			.withPropertyValues("delayed-tasks.queues.cfg-annotated.concurrency=5",
					"delayed-tasks.queues.cfg-annotated.timeout=10s")
			.withUserConfiguration(AnnotatedHandler.class)
			.run((context) -> {
				HandlerContainer container = onlyContainer(context);
				assertThat(container.concurrency()).isEqualTo(2);
				assertThat(container.timeout()).isEqualTo(Duration.ofSeconds(1));
			});
	}

	@Test
	void queuesWithoutOverridesUseTheGlobalSettings() {
		this.runner
			.withPropertyValues("test.queue=cfg-global", "delayed-tasks.worker.concurrency=2",
					"delayed-tasks.retry.max-retries=5", "delayed-tasks.retry.delay=700ms",
					"delayed-tasks.queues.cfg-other.concurrency=7")
			.withUserConfiguration(TunableHandler.class)
			.run((context) -> {
				HandlerContainer container = onlyContainer(context);
				assertThat(container.concurrency()).isEqualTo(2);
				assertThat(container.timeout()).isNull();
				assertThat(container.retryPolicy().getBackOff().start().nextBackOff()).isEqualTo(700);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				TaskId id = scheduler.schedule("cfg-global", new Work(0), Duration.ofMinutes(5));
				assertThat(scheduler.find("cfg-global", id)).map(TaskInfo::maxAttempts).hasValue(6);
			});
	}

	@Test
	void shutdownTimeoutNotBelowTheDefaultLifecyclePhaseTimeoutWarnsAtStartup(CapturedOutput output) {
		this.runner.withPropertyValues("delayed-tasks.worker.shutdown-timeout=30s").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output)
				.contains("delayed-tasks.worker.shutdown-timeout (PT30S) is not below "
						+ "spring.lifecycle.timeout-per-shutdown-phase (PT30S)")
				.contains("Lower the first or raise the second");
		});
	}

	@Test
	void shutdownTimeoutAboveAConfiguredLifecyclePhaseTimeoutWarnsAtStartup(CapturedOutput output) {
		this.runner
			.withPropertyValues("delayed-tasks.worker.shutdown-timeout=10s",
					"spring.lifecycle.timeout-per-shutdown-phase=5s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("delayed-tasks.worker.shutdown-timeout (PT10S) is not below "
						+ "spring.lifecycle.timeout-per-shutdown-phase (PT5S)");
			});
	}

	@Test
	void shutdownTimeoutBelowTheLifecyclePhaseTimeoutStartsWithoutThatWarning(CapturedOutput output) {
		this.runner
			.withPropertyValues("delayed-tasks.worker.shutdown-timeout=25s",
					"spring.lifecycle.timeout-per-shutdown-phase=26s")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(DelayedTaskHandlerRegistry.class);
				assertThat(output).doesNotContain("delayed-tasks.worker.shutdown-timeout");
			});
	}

	@Test
	void producerOnlyAndWorkerInstancesGiveTasksTheMaxAttemptsOfTheQueuesConfiguration(CapturedOutput output) {
		// The worker's handler names a policy bean that allows 1 retry; the queue is
		// configured for 4 on both instances.
		String[] shared = { "test.queue=cfg-agree", "delayed-tasks.queues.cfg-agree.retry.max-retries=4" };
		this.runner.withPropertyValues(shared)
			.withUserConfiguration(OneRetryPolicy.class, PolicyHandler.class)
			.run((worker) -> this.runner.withPropertyValues(shared)
				.withPropertyValues("delayed-tasks.worker.enabled=false")
				.withUserConfiguration(OneRetryPolicy.class, PolicyHandler.class)
				.run((producer) -> {
					assertThat(producer).doesNotHaveBean(DelayedTaskHandlerRegistry.class);
					assertThat(worker).hasSingleBean(DelayedTaskHandlerRegistry.class);
					TaskId fromWorker = worker.getBean(DelayedTaskScheduler.class)
						.schedule("cfg-agree", new Work(0), Duration.ofMinutes(5));
					TaskId fromProducer = producer.getBean(DelayedTaskScheduler.class)
						.schedule("cfg-agree", new Work(0), Duration.ofMinutes(5));
					DelayedTaskScheduler reader = producer.getBean(DelayedTaskScheduler.class);
					assertThat(reader.find("cfg-agree", fromWorker)).map(TaskInfo::maxAttempts).hasValue(5);
					assertThat(reader.find("cfg-agree", fromProducer)).map(TaskInfo::maxAttempts).hasValue(5);
					assertThat(output).contains("names the retry policy bean 'oneRetry', which allows 1 retries, "
							+ "but queue 'cfg-agree' is configured for 4");
				}));
	}

	private static HandlerContainer onlyContainer(AssertableApplicationContext context) {
		return context.getBean(DelayedTaskHandlerRegistry.class).getHandlers().iterator().next();
	}

	private static String startupFailureMessage(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		Throwable failure = context.getStartupFailure();
		Throwable root = NestedExceptionUtils.getMostSpecificCause(failure);
		return root.getMessage();
	}

	private static boolean isVirtual(Thread thread) throws Exception {
		if (Runtime.version().feature() < 21) {
			return false;
		}
		Method isVirtual = Thread.class.getMethod("isVirtual");
		return (boolean) isVirtual.invoke(thread);
	}

	record Work(long sleepMillis) {
	}

	@Configuration(proxyBeanMethods = false)
	static class RecordingHandler {

		final List<Thread> threads = new CopyOnWriteArrayList<>();

		@DelayedTaskHandler(queue = "${test.queue}")
		void handle(String payload) {
			this.threads.add(Thread.currentThread());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TunableHandler {

		final AtomicInteger running = new AtomicInteger();

		final AtomicInteger maxConcurrent = new AtomicInteger();

		final AtomicInteger finished = new AtomicInteger();

		@DelayedTaskHandler(queue = "${test.queue}")
		void handle(Work work) throws InterruptedException {
			int now = this.running.incrementAndGet();
			this.maxConcurrent.accumulateAndGet(now, Math::max);
			try {
				Thread.sleep(work.sleepMillis());
				this.finished.incrementAndGet();
			}
			finally {
				this.running.decrementAndGet();
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class ExecutorUser {

		final ThreadPoolTaskExecutor executor;

		final TaskScheduler scheduler;

		ExecutorUser(ThreadPoolTaskExecutor executor, TaskScheduler scheduler) {
			this.executor = executor;
			this.scheduler = scheduler;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnThreads {

		final AtomicInteger scheduled = new AtomicInteger();

		@Bean(name = DelayedTaskHandlerRegistry.HANDLER_EXECUTOR_BEAN_NAME, defaultCandidate = false)
		SimpleAsyncTaskExecutor appHandlerExecutor() {
			return new SimpleAsyncTaskExecutor("app-handler-");
		}

		@Bean(DelayedTaskHandlerRegistry.TASK_SCHEDULER_BEAN_NAME)
		ThreadPoolTaskScheduler appTaskScheduler() {
			ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler() {

				@Override
				public ScheduledFuture<?> schedule(Runnable task, Instant startTime) {
					OwnThreads.this.scheduled.incrementAndGet();
					return super.schedule(task, startTime);
				}

				@Override
				public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Instant startTime, Duration period) {
					OwnThreads.this.scheduled.incrementAndGet();
					return super.scheduleAtFixedRate(task, startTime, period);
				}

			};
			scheduler.setAcceptTasksAfterContextClose(true);
			return scheduler;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OneRetryPolicy {

		@Bean
		RetryPolicy oneRetry() {
			return RetryPolicy.builder().maxRetries(1).delay(Duration.ofMillis(100)).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PolicyHandler {

		@DelayedTaskHandler(queue = "${test.queue}", retryPolicy = "oneRetry")
		void handle(Work work) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class AnnotatedHandler {

		@DelayedTaskHandler(queue = "cfg-annotated", concurrency = "2", timeout = "1s")
		void handle(Work work) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Policies {

		@Bean
		String notAPolicy() {
			return "not a policy";
		}

		@Bean
		RetryPolicy aPolicy() {
			return RetryPolicy.withDefaults();
		}

	}

	static class TwoPayloads {

		@DelayedTaskHandler(queue = "cfg-invalid")
		void handle(String first, String second) {
		}

	}

	static class ContextFirst {

		@DelayedTaskHandler(queue = "cfg-invalid")
		void handle(TaskContext context, String payload) {
		}

	}

	static class NoParameters {

		@DelayedTaskHandler(queue = "cfg-invalid")
		void handle() {
		}

	}

	static class ThreeParameters {

		@DelayedTaskHandler(queue = "cfg-invalid")
		void handle(String payload, TaskContext context, String extra) {
		}

	}

	static class StaticMethod {

		@DelayedTaskHandler(queue = "cfg-invalid")
		static void handle(String payload) {
		}

	}

	static class NoQueue {

		@DelayedTaskHandler
		void handle(String payload) {
		}

	}

	static class InvalidQueueName {

		@DelayedTaskHandler(queue = "bad queue")
		void handle(String payload) {
		}

	}

	static class ZeroConcurrency {

		@DelayedTaskHandler(queue = "cfg-invalid", concurrency = "0")
		void handle(String payload) {
		}

	}

	static class TextConcurrency {

		@DelayedTaskHandler(queue = "cfg-invalid", concurrency = "many")
		void handle(String payload) {
		}

	}

	static class BadTimeout {

		@DelayedTaskHandler(queue = "cfg-invalid", timeout = "soon")
		void handle(String payload) {
		}

	}

	static class NegativeTimeout {

		@DelayedTaskHandler(queue = "cfg-invalid", timeout = "-1s")
		void handle(String payload) {
		}

	}

	static class BadAutoStartup {

		@DelayedTaskHandler(queue = "cfg-invalid", autoStartup = "maybe")
		void handle(String payload) {
		}

	}

	static class UnknownRetryPolicy {

		@DelayedTaskHandler(queue = "cfg-invalid", retryPolicy = "missingPolicy")
		void handle(String payload) {
		}

	}

	static class RetryPolicyOfWrongType {

		@DelayedTaskHandler(queue = "cfg-invalid", retryPolicy = "notAPolicy")
		void handle(String payload) {
		}

	}

	static class DuplicateQueueOne {

		@DelayedTaskHandler(queue = "cfg-dup")
		void handle(String payload) {
		}

	}

	static class DuplicateQueueTwo {

		@DelayedTaskHandler(queue = "cfg-dup")
		void handle(String payload) {
		}

	}

	static class DuplicateIdOne {

		@DelayedTaskHandler(queue = "cfg-id-one", id = "shared-id")
		void handle(String payload) {
		}

	}

	static class DuplicateIdTwo {

		@DelayedTaskHandler(queue = "cfg-id-two", id = "shared-id")
		void handle(String payload) {
		}

	}

}

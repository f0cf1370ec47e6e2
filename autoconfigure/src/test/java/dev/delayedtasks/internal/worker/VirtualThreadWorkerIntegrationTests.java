package dev.delayedtasks.internal.worker;

import java.lang.reflect.Method;
import java.time.Duration;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.worker.RunLog.Run;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Handlers end to end with {@code spring.threads.virtual.enabled}: on a JDK with virtual
 * threads (CI runs this class on JDK 25 too) every run is on a virtual thread, on JDK 17
 * on a platform thread; either way a delayed task runs once and on time, a failing one is
 * retried and dead-lettered, a run past its timeout is interrupted, and a run still going
 * at shutdown is interrupted and its task released to another instance.
 */
@WithRedis
class VirtualThreadWorkerIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	VirtualThreadWorkerIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases
			.runner(redis, "spring.threads.virtual.enabled=true", "delayed-tasks.retry.max-retries=1",
					"delayed-tasks.retry.delay=100ms", "delayed-tasks.retry.jitter=0ms")
			.withUserConfiguration(Handler.class);
	}

	@Test
	void delayedFailingAndTimedOutTasksRunOnVirtualThreadsWhereTheJdkHasThem() {
		RunLog log = new RunLog();
		this.runner.withBean(RunLog.class, () -> log)
			.withPropertyValues("test.queue=vt-runs", "test.instance=a")
			.run((context) -> {
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				DeadLetters deadLetters = context.getBean(DeadLetters.class);
				TaskId delayed = scheduler.schedule("vt-runs", new Job("succeed"), Duration.ofMillis(300));
				TaskId failing = scheduler.enqueue("vt-runs", new Job("fail"));
				TaskId slow = scheduler.enqueue("vt-runs", new Job("block"));
				await().atMost(WAIT).until(() -> log.of(delayed).size() == 1 && deadLetters.count("vt-runs") == 2);
				assertThat(log.of(delayed)).singleElement().satisfies((run) -> {
					assertThat(run.isFinished()).isTrue();
					assertThat(run.context().startedAt()).isAfterOrEqualTo(run.context().dueAt());
				});
				assertThat(log.of(failing)).extracting((run) -> run.context().attempt()).containsExactly(1, 2);
				// Cut at the 300 ms timeout, twice, by an interrupt the virtual thread
				// sees.
				assertThat(log.of(slow)).hasSize(2).allSatisfy((run) -> assertThat(run.wasInterrupted()).isTrue());
				assertThat(log.runs()).allSatisfy(VirtualThreadWorkerIntegrationTests::assertThreadKind);
				ShortLeases.assertNoFurtherRun(() -> assertThat(log.size()).isEqualTo(5));
			});
	}

	@Test
	void aRunStillGoingAtShutdownIsInterruptedAndReleasedToAnotherInstance() {
		RunLog log = new RunLog();
		String queue = "vt-shutdown";
		ApplicationContextRunner contexts = this.runner.withBean(RunLog.class, () -> log)
			.withPropertyValues("test.queue=" + queue, "test.timeout=1m");
		contexts.withPropertyValues("delayed-tasks.worker.enabled=false", "test.instance=producer").run((producer) -> {
			DelayedTaskScheduler scheduler = producer.getBean(DelayedTaskScheduler.class);
			TaskId id = scheduler.enqueue(queue, new Job("block"));
			contexts.withPropertyValues("test.instance=a").run((a) -> {
				await().atMost(WAIT).until(() -> log.on("a").size() == 1);
				a.close();
			});
			assertThat(log.on("a")).singleElement().satisfies((run) -> assertThat(run.wasInterrupted()).isTrue());
			assertThat(scheduler.find(queue, id)).map(TaskInfo::state).hasValue(TaskState.READY);
			contexts.withPropertyValues("test.instance=b").run((b) -> {
				await().atMost(WAIT).until(() -> log.on("b").stream().anyMatch(Run::isFinished));
				// Released, not reaped: the interrupted run did not count a delivery.
				assertThat(log.on("b")).singleElement().satisfies((run) -> {
					assertThat(run.context().id()).isEqualTo(id);
					assertThat(run.context().deliveryCount()).isEqualTo(1);
					assertThreadKind(run);
				});
			});
			assertThat(log.on("a")).singleElement().satisfies(VirtualThreadWorkerIntegrationTests::assertThreadKind);
			ShortLeases.assertPartitionEmpty(producer.getBean(StringRedisTemplate.class), this.redis, queue);
		});
	}

	private static void assertThreadKind(Run run) {
		assertThat(isVirtual(run.thread())).as("%s ran on a virtual thread (JDK %s)", run, Runtime.version().feature())
			.isEqualTo(Runtime.version().feature() >= 21);
	}

	private static boolean isVirtual(Thread thread) {
		if (Runtime.version().feature() < 21) {
			return false;
		}
		try {
			Method isVirtual = Thread.class.getMethod("isVirtual");
			return (boolean) isVirtual.invoke(thread);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException(ex);
		}
	}

	record Job(String action) {
	}

	/**
	 * Succeeds, fails, or blocks until interrupted; on instance {@code b} a blocking job
	 * returns at once.
	 */
	@Configuration(proxyBeanMethods = false)
	static class Handler {

		private final RunLog log;

		private final String instance;

		Handler(RunLog log, @Value("${test.instance}") String instance) {
			this.log = log;
			this.instance = instance;
		}

		@DelayedTaskHandler(queue = "${test.queue}", timeout = "${test.timeout:300ms}", concurrency = "4")
		void handle(Job job, TaskContext context) throws InterruptedException {
			Run run = this.log.started(this.instance, context, job);
			switch (job.action()) {
				case "fail" -> {
					run.finished();
					throw new IllegalStateException("failing, attempt " + context.attempt());
				}
				case "block" -> {
					if (!this.instance.equals("b")) {
						try {
							Thread.sleep(30_000);
						}
						catch (InterruptedException ex) {
							run.interrupted();
							throw ex;
						}
					}
				}
				default -> {
				}
			}
			run.finished();
		}

	}

}

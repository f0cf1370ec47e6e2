package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.Concurrency;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.FlowHandler;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.Job;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * "Throttled time" and priorities through the application (docs/flow-control.md):
 * throttled time is only the time waited while tasks are ready; a listener's
 * {@code throttled} that throws stops nothing; the non-blocking {@code scheduleAsync}
 * path keeps the priority.
 */
@WithRedis
class PriorityEdgeCasesIntegrationTests {

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	PriorityEdgeCasesIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(FlowHandler.class);
	}

	/**
	 * "Each wait of a dispatcher for its queue's limits while tasks are ready ... is
	 * reported". At the global concurrency (1), with one task running and the only other
	 * one cancelled while it waited, nothing is ready: the dispatcher's further waits are
	 * not throttled time. The cancelled task leaves a hint in ready (a ghost), which the
	 * full global concurrency leaves no room to pop: the claim counts the ghosts out.
	 */
	@Test
	void aDispatcherAtTheGlobalConcurrencyWithNothingReadyReportsNoThrottledTime() {
		String queue = "prio-throttled-ghost";
		RunLog log = new RunLog();
		Concurrency gate = new Concurrency(true);
		Waits heard = new Waits(false);
		this.runner.withBean(RunLog.class, () -> log)
			.withBean(Concurrency.class, () -> gate)
			.withBean(Waits.class, () -> heard)
			.withPropertyValues("test.queue=" + queue, "test.instance=a", "test.concurrency=2",
					"delayed-tasks.queues." + queue + ".global-concurrency=1")
			.run((context) -> {
				awaitLimits(context, queue);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				scheduler.schedule(TaskRequest.of(queue, new Job(0)));
				await().atMost(Duration.ofSeconds(5)).until(() -> log.size() == 1);
				TaskId waiting = scheduler.schedule(TaskRequest.of(queue, new Job(1)));
				await().atMost(Duration.ofSeconds(5)).until(() -> heard.total().toMillis() > 0);
				assertThat(scheduler.cancel(queue, waiting)).isTrue();
				// The wait under way when the task was cancelled ends within the block
				// timeout (1 s): what it reports is its own business.
				Thread.sleep(1500);
				Duration before = heard.total();
				Thread.sleep(3000);
				Duration whileNothingReady = heard.total().minus(before);
				long ready = context.getBean(RedisQueueStats.class).read(queue).ready();
				gate.open();
				assertThat(ready).as("ready tasks while measuring").isZero();
				assertThat(whileNothingReady).as("throttled time reported over 3 s with nothing ready")
					.isLessThan(Duration.ofMillis(200));
			});
	}

	/**
	 * Errors from user code: a listener whose {@code throttled} throws an Error does not
	 * stop the dispatcher (Listeners isolates it): every task of a rate-limited queue
	 * still runs.
	 */
	@Test
	void aListenerThatThrowsFromThrottledStopsNothing() {
		String queue = "prio-throttled-throws";
		RunLog log = new RunLog();
		Waits heard = new Waits(true);
		this.runner.withBean(RunLog.class, () -> log)
			.withBean(Concurrency.class, () -> new Concurrency(false))
			.withBean(Waits.class, () -> heard)
			.withPropertyValues("test.queue=" + queue, "test.instance=a", "test.concurrency=4",
					"delayed-tasks.queues." + queue + ".rate-limit=3/1s")
			.run((context) -> {
				awaitLimits(context, queue);
				List<TaskRequest> requests = new ArrayList<>();
				for (int i = 0; i < 8; i++) {
					requests.add(TaskRequest.of(queue, new Job(i)));
				}
				context.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
				await().atMost(Duration.ofSeconds(10)).until(() -> log.finishedCount() == 8);
				assertThat(heard.calls.get()).as("throttled calls that threw").isPositive();
			});
	}

	/**
	 * The non-blocking path ({@code scheduleAsync}, on the reactive connection) keeps the
	 * priority: {@code find} shows it and the task waits in its priority's list.
	 */
	@Test
	void scheduleAsyncKeepsThePriority() {
		String queue = "prio-async";
		ShortLeases.runner(this.redis, "delayed-tasks.worker.enabled=false").run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId id = scheduler.scheduleAsync(TaskRequest.of(queue, new Job(1)).priority(7)).get(5, TimeUnit.SECONDS);
			assertThat(scheduler.find(queue, id))
				.hasValueSatisfying((info) -> assertThat(info.priority()).isEqualTo(7));
			StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
			PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
			assertThat(template.opsForList().range(keys.base() + "ready:7", 0, -1)).containsExactly(id.value());
		});
	}

	private void awaitLimits(AssertableApplicationContext context, String queue) {
		StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
		PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
		await().atMost(Duration.ofSeconds(5)).until(() -> template.opsForHash().get(keys.meta(), "fl") != null);
	}

	/** Each reported wait; optionally throwing an Error after recording it. */
	static final class Waits implements DelayedTaskListener {

		final List<Duration> waits = new CopyOnWriteArrayList<>();

		final AtomicInteger calls = new AtomicInteger();

		private final boolean fail;

		Waits(boolean fail) {
			this.fail = fail;
		}

		@Override
		public void throttled(String queue, Duration waited) {
			this.waits.add(waited);
			this.calls.incrementAndGet();
			if (this.fail) {
				throw new StackOverflowError("a listener's throttled fails");
			}
		}

		Duration total() {
			return this.waits.stream().reduce(Duration.ZERO, Duration::plus);
		}

	}

}

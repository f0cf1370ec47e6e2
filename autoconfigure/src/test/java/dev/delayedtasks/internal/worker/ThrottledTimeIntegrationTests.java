package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.Concurrency;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.FlowHandler;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.Job;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A dispatcher held back by its queue's flow control while tasks are ready reports how
 * long it waited ({@code DelayedTaskListener.throttled}, the meter
 * {@code delayed.tasks.throttled}), for the rate window and for the global concurrency
 * alike, and an unlimited queue reports nothing.
 */
@WithRedis
class ThrottledTimeIntegrationTests {

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	ThrottledTimeIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(FlowHandler.class);
	}

	@Test
	void waitingForTheRateWindowIsThrottledTime() {
		// 2 a second: the fifth task starts two windows after the first.
		Map<String, Duration> heard = run("throttled-rate", 5, "rate-limit=2/1s", "test.concurrency=4");
		assertThat(heard.get("throttled-rate")).as("time waited for the rate window")
			.isBetween(Duration.ofMillis(1500), Duration.ofMillis(4000));
	}

	@Test
	void waitingForAFreeSlotOfTheGlobalConcurrencyIsThrottledTime() {
		// One at a time, 400 ms each: the dispatcher waits for each lease to end while
		// the rest are ready.
		Map<String, Duration> heard = run("throttled-cap", 4, "global-concurrency=1", "test.concurrency=4",
				"test.sleep-ms=400");
		assertThat(heard.get("throttled-cap")).as("time waited for a free slot")
			.isBetween(Duration.ofMillis(900), Duration.ofMillis(3000));
	}

	@Test
	void aQueueWithoutLimitsIsNeverThrottled() {
		Map<String, Duration> heard = run("throttled-none", 20, null, "test.concurrency=2", "test.sleep-ms=50");
		assertThat(heard).doesNotContainKey("throttled-none");
	}

	private Map<String, Duration> run(String queue, int tasks, String limit, String... properties) {
		RunLog log = new RunLog();
		ThrottledTime heard = new ThrottledTime();
		ApplicationContextRunner instance = this.runner.withBean(RunLog.class, () -> log)
			.withBean(Concurrency.class, () -> new Concurrency(false))
			.withBean(ThrottledTime.class, () -> heard)
			.withPropertyValues("test.queue=" + queue, "test.instance=a")
			.withPropertyValues(properties);
		if (limit != null) {
			instance = instance.withPropertyValues("delayed-tasks.queues." + queue + "." + limit);
		}
		instance.run((context) -> {
			if (limit != null) {
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
				await().atMost(Duration.ofSeconds(5)).until(() -> template.opsForHash().get(keys.meta(), "fl") != null);
			}
			List<TaskRequest> requests = new ArrayList<>();
			for (int i = 0; i < tasks; i++) {
				requests.add(TaskRequest.of(queue, new Job(i)));
			}
			context.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
			await().atMost(Duration.ofSeconds(15)).until(() -> log.finishedCount() == tasks);
		});
		return heard.waited;
	}

	/** The time each queue's dispatcher was heard waiting. */
	static final class ThrottledTime implements DelayedTaskListener {

		final Map<String, Duration> waited = new ConcurrentHashMap<>();

		@Override
		public void throttled(String queue, Duration waited) {
			this.waited.merge(queue, waited, Duration::plus);
		}

	}

}

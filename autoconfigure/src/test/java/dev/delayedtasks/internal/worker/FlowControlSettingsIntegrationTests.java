package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.Concurrency;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.FlowHandler;
import dev.delayedtasks.internal.worker.FlowControlIntegrationTests.Job;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Flow control: settings and stored values. Bad or extreme values of the {@code fl}
 * field, a rate window too long, and the memory of the {@code starts} window.
 */
@WithRedis
class FlowControlSettingsIntegrationTests {

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	FlowControlSettingsIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(FlowHandler.class);
	}

	private ApplicationContextRunner instance(String queue, RunLog log, Concurrency concurrency, String... properties) {
		return this.runner.withBean(RunLog.class, () -> log)
			.withBean(Concurrency.class, () -> concurrency)
			.withPropertyValues("test.queue=" + queue, "test.instance=a", "test.concurrency=8")
			.withPropertyValues(properties);
	}

	/**
	 * RateLimit.parse: "@throws IllegalArgumentException if the text is not a valid rate
	 * limit, naming what is wrong", and "Bad settings: a value that is not a limit stops
	 * the application at start and names the property ... with the reason". A window over
	 * about 292 years made {@code window.toNanos()} overflow: an ArithmeticException,
	 * which the endpoint's 'limits' action would not have turned into a 400.
	 */
	@Test
	void aRateLimitWithAWindowTooLongIsRefusedWithAnIllegalArgumentException() {
		assertThatThrownBy(() -> RateLimit.parse("1/3000000h")).isInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void aRateLimitPropertyWithAWindowTooLongStopsTheApplicationWithAReason() {
		String queue = "flow-huge-window";
		instance(queue, new RunLog(), new Concurrency(false),
				"delayed-tasks.queues." + queue + ".rate-limit=1/3000000h")
			.run((context) -> {
				assertThat(context).hasFailed();
				Throwable failure = context.getStartupFailure();
				StringBuilder causes = new StringBuilder();
				for (Throwable t = failure; t != null; t = t.getCause()) {
					causes.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage()).append(" <- ");
				}
				assertThat(causes.toString()).contains("delayed-tasks.queues." + queue + ".rate-limit")
					.doesNotContain("long overflow");
			});
	}

	/**
	 * "an unreadable field limits nothing" (flow.lua) and FlowLimits.decode: "NONE for an
	 * absent or unreadable field (the scripts read it alike)". For each bad value, the
	 * queue keeps working (all 5 gated tasks run at once: nothing limits them) and
	 * limits() reports what the scripts enforce.
	 */
	@ParameterizedTest(name = "fl=''{0}''")
	@ValueSource(strings = { "abc", "1 0 0", "-1 1000 0", "99999999999999999999 1000 1", "5 1000 0 ", "1 0 3", "",
			"0 1000 0", "2 1000 1 7", "0 0 0 2 0", "0 0 0 0 0", "1 1000 0 1" })
	void anUnreadableFlowFieldLimitsNothingAndIsReportedAsNone(String bad) {
		String queue = "flow-bad-fl-" + Integer.toHexString(bad.hashCode());
		RunLog log = new RunLog();
		Concurrency concurrency = new Concurrency(true);
		instance(queue, log, concurrency).run((context) -> {
			StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
			PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
			Thread.sleep(500);
			template.opsForHash().put(keys.meta(), "fl", bad);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			for (int i = 0; i < 5; i++) {
				scheduler.schedule(TaskRequest.of(queue, new Job(i)));
			}
			try {
				await().atMost(Duration.ofSeconds(5)).until(() -> log.size() >= 5);
			}
			finally {
				concurrency.open();
			}
			await().atMost(Duration.ofSeconds(5)).until(() -> log.finishedCount() >= 5);
			QueueLimits reported = context.getBean(QueueControl.class).limits(queue);
			assertThat(concurrency.max()).as("handlers at once (nothing limits them)").isEqualTo(5);
			assertThat(reported).as("limits() for a field the scripts ignore").isEqualTo(QueueLimits.NONE);
		});
	}

	/**
	 * "Memory: at most count entries ... per rate-limited queue" and "expiring with its
	 * last entry".
	 */
	@Test
	void theStartsWindowHoldsAtMostCountEntriesAndExpiresWhenIdle() {
		String queue = "flow-starts";
		RunLog log = new RunLog();
		instance(queue, log, new Concurrency(false), "delayed-tasks.queues." + queue + ".rate-limit=3/300ms")
			.run((context) -> {
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), queue);
				String starts = keys.base() + "starts";
				await().atMost(Duration.ofSeconds(5))
					.until(() -> "3 300 0".equals(template.opsForHash().get(keys.meta(), "fl")));
				AtomicLong max = new AtomicLong();
				AtomicBoolean sampling = new AtomicBoolean(true);
				Thread sampler = new Thread(() -> {
					while (sampling.get()) {
						Long n = template.opsForZSet().zCard(starts);
						max.accumulateAndGet((n != null) ? n : 0, Math::max);
					}
				});
				sampler.start();
				List<TaskRequest> requests = new ArrayList<>();
				for (int i = 0; i < 30; i++) {
					requests.add(TaskRequest.of(queue, new Job(i)));
				}
				context.getBean(DelayedTaskScheduler.class).scheduleAll(requests);
				await().atMost(Duration.ofSeconds(10)).until(() -> log.finishedCount() >= 30);
				sampling.set(false);
				sampler.join();
				Long pttl = template.getExpire(starts, TimeUnit.MILLISECONDS);
				assertThat(pttl).as("the window's time to live after the last lease").isLessThanOrEqualTo(300L);
				assertThat(max.get()).isLessThanOrEqualTo(3);
				await().atMost(Duration.ofSeconds(2)).until(() -> !Boolean.TRUE.equals(template.hasKey(starts)));
			});
	}

}

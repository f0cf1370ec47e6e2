package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksMetricsAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksSnapshotsAutoConfiguration;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.StoreInvariantChecks;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Bad data in Redis while workers run: a payload that is not JSON, a payload of another
 * type than the handler's, a task hash with a missing field, a task key of the wrong
 * type, a huge payload, a queue whose ready list is a string, and an id that breaks the
 * id rule at the head of a queue. Each bad task is dead-lettered with its reason,
 * reported in one log line and a metric; the broken queue is reported, not retried in a
 * tight loop; every good task still runs exactly once.
 */
@WithRedis(privateServer = true)
@ExtendWith(OutputCaptureExtension.class)
class BadDataInRedisIntegrationTests {

	private static final String QUEUE = "bad-data";

	private static final String BYSTANDER = "bystander";

	private static final String BROKEN = "broken";

	private static final String MALFORMED = "malformed-id";

	private static final Duration BAD_DUE = Duration.ofMillis(1500);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	BadDataInRedisIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksSnapshotsAutoConfiguration.class,
					MetricsAutoConfiguration.class, DelayedTasksMetricsAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.worker.shutdown-timeout=1s",
					"delayed-tasks.snapshot-interval=200ms")
			.withUserConfiguration(Handlers.class);
	}

	@Test
	void badTasksAreDeadLetteredAndReportedWhileGoodTasksKeepFlowing(CapturedOutput output) {
		this.runner.run((context) -> {
			Handlers handlers = context.getBean(Handlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DeadLetters deadLetters = context.getBean(DeadLetters.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), QUEUE);

			TaskId notJson = scheduler.schedule(QUEUE, new Job("not-json"), BAD_DUE);
			redis.opsForValue().set(keys.payload(notJson.value()), "{not json");
			TaskId otherType = scheduler.schedule(QUEUE, List.of(1, 2, 3), BAD_DUE);
			TaskId missingField = scheduler.schedule(QUEUE, new Job("missing-field"), BAD_DUE);
			redis.opsForHash().delete(keys.task(missingField.value()), "a");
			TaskId wrongKeyType = scheduler.schedule(QUEUE, new Job("wrong-key-type"), BAD_DUE);
			redis.delete(keys.task(wrongKeyType.value()));
			redis.opsForValue().set(keys.task(wrongKeyType.value()), "not a hash");
			TaskId huge = scheduler.schedule(QUEUE, new Job("huge"), BAD_DUE);
			redis.opsForValue().set(keys.payload(huge.value()), "\"" + "x".repeat(4 * 1024 * 1024) + "\"");

			PartitionKeys brokenKeys = PartitionKeys.of(this.redis.keyPrefix(), BROKEN);
			redis.opsForValue().set(brokenKeys.ready(), "not a list");
			Throwable refused = catchThrowable(() -> scheduler.enqueue(BROKEN, new Job("refused")));
			assertThat(refused).isInstanceOf(TaskStoreException.class)
				.hasMessageContaining("'" + BROKEN + "'")
				.hasMessageContaining("WRONGTYPE");

			List<String> good = new ArrayList<>();
			for (int i = 0; i < 40; i++) {
				String queue = (i % 2 == 0) ? QUEUE : BYSTANDER;
				String name = "good-" + i;
				good.add(name);
				scheduler.schedule(queue, new Job(name), Duration.ofMillis(50L * i));
			}

			await().atMost(Duration.ofSeconds(15))
				.until(() -> good.stream().allMatch((name) -> handlers.runs(name) >= 1)
						&& deadLetters.count(QUEUE) == 5);
			Map<TaskId, DeadLetter> letters = deadLetters.list(QUEUE, 10)
				.stream()
				.collect(Collectors.toMap(DeadLetter::id, Function.identity()));
			assertThat(letters.get(notJson).reason()).isEqualTo("unreadable-payload");
			assertThat(letters.get(otherType).reason()).isEqualTo("unreadable-payload");
			assertThat(letters.get(otherType).message()).contains("Job");
			assertThat(letters.get(huge).reason()).isEqualTo("unreadable-payload");
			assertThat(letters.get(huge).message()).hasSizeLessThanOrEqualTo(500);
			assertThat(letters.get(missingField).reason()).isEqualTo("corrupt");
			assertThat(letters.get(missingField).message()).contains("missing");
			assertThat(letters.get(wrongKeyType).reason()).isEqualTo("corrupt");
			assertThat(letters.get(wrongKeyType).message()).contains("not a hash");
			assertThat(handlers.runs).doesNotContainKeys("not-json", "missing-field", "wrong-key-type", "huge");

			assertThat(meters.get("delayed.tasks.dead.lettered")
				.tags("queue", QUEUE, "reason", "unreadable-payload")
				.counter()
				.count()).isEqualTo(3);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> meters.get("delayed.tasks.corrupt").tags("queue", QUEUE).functionCounter().count() == 2);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> output.getOut().contains("2 task(s) of queue '" + QUEUE + "' had unreadable data"));

			// The broken queue has failed all along: reported once, not in a loop.
			assertThat(lines(output, "Dispatcher of queue '" + BROKEN + "' failed")).isOne();
			assertThat(lines(output, "Could not read queue '" + BROKEN + "'")).isOne();
			redis.delete(brokenKeys.ready());
			scheduler.enqueue(BROKEN, new Job("after-repair"));
			await().atMost(Duration.ofSeconds(10)).until(() -> handlers.runs("after-repair") == 1);

			ShortLeases.assertNoFurtherRun(
					() -> assertThat(good).allSatisfy((name) -> assertThat(handlers.runs(name)).as(name).isEqualTo(1)));
			assertThat(lines(output, "had unreadable data")).as("one line per snapshot that saw new ones").isOne();
		});
	}

	@Test
	void malformedIdAtTheHeadOfTheQueueIsDeadLetteredAndTheTasksBehindItRun() {
		this.runner.run((context) -> {
			Handlers handlers = context.getBean(Handlers.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			DeadLetters deadLetters = context.getBean(DeadLetters.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			PartitionKeys keys = PartitionKeys.of(this.redis.keyPrefix(), MALFORMED);

			// A task whose id no TaskId can hold, due first: a valid task moved under
			// that id.
			String malformed = "bad id\nwith a newline";
			scheduler.schedule(TaskRequest.of(MALFORMED, new Job("carrier")).id("carrier").delay(BAD_DUE));
			redis.rename(keys.task("carrier"), keys.task(malformed));
			redis.rename(keys.payload("carrier"), keys.payload(malformed));
			Double due = redis.opsForZSet().score(keys.sched(), "carrier");
			redis.opsForZSet().remove(keys.sched(), "carrier");
			redis.opsForZSet().add(keys.sched(), malformed, due);
			List<String> behind = new ArrayList<>();
			for (int i = 0; i < 10; i++) {
				behind.add("behind-" + i);
				scheduler.schedule(MALFORMED, new Job("behind-" + i), BAD_DUE.plusMillis(10L * (i + 1)));
			}

			await().atMost(Duration.ofSeconds(10))
				.until(() -> behind.stream().allMatch((name) -> handlers.runs(name) >= 1));
			assertThat(redis.opsForZSet().score(keys.dead(), malformed)).isNotNull();
			assertThat(redis.opsForValue().get(keys.error(malformed))).startsWith("corrupt\n");
			assertThat(deadLetters.count(MALFORMED)).isOne();
			assertThat(handlers.runs).doesNotContainKey("carrier");
			ShortLeases.assertNoFurtherRun(() -> assertThat(behind)
				.allSatisfy((name) -> assertThat(handlers.runs(name)).as(name).isEqualTo(1)));
			assertThat(StoreInvariantChecks.violations(redis, this.redis.keyPrefix(), MALFORMED)).isEmpty();
		});
	}

	private static long lines(CapturedOutput output, String text) {
		return output.getOut().lines().filter((line) -> line.contains(text)).count();
	}

	record Job(String name) {
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		@Bean
		SimpleMeterRegistry simpleMeterRegistry() {
			return new SimpleMeterRegistry();
		}

		@DelayedTaskHandler(queue = QUEUE, concurrency = "2")
		void run(Job job, TaskContext context) {
			this.runs.computeIfAbsent(job.name(), (name) -> new AtomicInteger()).incrementAndGet();
		}

		@DelayedTaskHandler(queue = BYSTANDER)
		void bystander(Job job, TaskContext context) {
			run(job, context);
		}

		@DelayedTaskHandler(queue = BROKEN)
		void broken(Job job, TaskContext context) {
			run(job, context);
		}

		@DelayedTaskHandler(queue = MALFORMED, concurrency = "2")
		void malformed(Job job, TaskContext context) {
			run(job, context);
		}

		int runs(String name) {
			AtomicInteger count = this.runs.get(name);
			return (count != null) ? count.get() : 0;
		}

	}

}

package dev.delayedtasks.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.ReactiveDelayedTaskScheduler;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.admin.DeadLetterRetention;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.script.FunctionLibraries;
import dev.delayedtasks.internal.store.script.RedisMasters;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

@WithRedis
class DelayedTasksAutoConfigurationIntegrationTests {

	private final ApplicationContextRunner runner;

	private final TestRedis redis;

	DelayedTasksAutoConfigurationIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(),
					"delayed-tasks.key-prefix=" + redis.keyPrefix());
	}

	@Test
	void runWithRedisShouldProvideASchedulerThatWorks() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(DelayedTaskScheduler.class)
				.hasSingleBean(DeadLetters.class)
				.hasSingleBean(TaskStore.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId id = scheduler.schedule("autoconfig", "hello", Duration.ofMinutes(5));
			assertThat(scheduler.find("autoconfig", id)).hasValueSatisfying((info) -> {
				assertThat(info.maxAttempts()).isEqualTo(4);
				assertThat(info.deliveries()).isZero();
			});
			assertThat(context.getBean(StringRedisTemplate.class).hasKey(this.redis.keyPrefix() + ":queues")).isTrue();
		});
	}

	@Test
	void runWithRedisShouldProvideANonBlockingAndAReactiveScheduler() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(ReactiveDelayedTaskScheduler.class);
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId id = scheduler.scheduleAsync("autoconfig-async", "hello", Duration.ofMinutes(5))
				.get(10, TimeUnit.SECONDS);
			assertThat(context.getBean(ReactiveDelayedTaskScheduler.class)
				.find("autoconfig-async", id)
				.block(Duration.ofSeconds(10))).isNotNull();
		});
	}

	@Test
	void runWithAUserReactiveSchedulerShouldBackOff() {
		ReactiveDelayedTaskScheduler mine = mock(ReactiveDelayedTaskScheduler.class);
		this.runner.withBean(ReactiveDelayedTaskScheduler.class, () -> mine)
			.run((context) -> assertThat(context.getBean(ReactiveDelayedTaskScheduler.class)).isSameAs(mine));
	}

	@Test
	void runWithoutReactorShouldProvideNoReactiveSchedulerAndRunAsyncCallsOnTheCaller() {
		this.runner.withClassLoader(new FilteredClassLoader("reactor.core.publisher")).run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(ReactiveDelayedTaskScheduler.class);
			CompletableFuture<TaskId> future = context.getBean(DelayedTaskScheduler.class)
				.scheduleAsync("autoconfig-no-reactor", "hello", Duration.ofMinutes(5));
			assertThat(future).isCompleted();
			assertThat(future.get()).isNotNull();
		});
	}

	@Test
	void runShouldWarmStartUnlessSwitchedOff() {
		this.runner.run((context) -> assertThat(context).hasBean("delayedTasksWarmStart"));
		this.runner.withPropertyValues("delayed-tasks.warm-start=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean("delayedTasksWarmStart"));
	}

	@Test
	void runShouldSendScriptsWithEvalUnlessFunctionsModeIsChosen() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(RedisMasters.class)
			.doesNotHaveBean(FunctionLibraries.class));
		this.runner
			.withPropertyValues("delayed-tasks.scripts.mode=functions", "delayed-tasks.scripts.load-library=true")
			.run((context) -> {
				assertThat(context).hasSingleBean(FunctionLibraries.class);
				if (this.redis.version().startsWith("6.")) {
					assertThat(context).hasFailed();
				}
				else {
					TaskId id = context.getBean(DelayedTaskScheduler.class).enqueue("autoconfig", "functions");
					assertThat(context.getBean(DelayedTaskScheduler.class).find("autoconfig", id)).isPresent();
					// The non-blocking path sends FCALL too.
					TaskId async = context.getBean(DelayedTaskScheduler.class)
						.scheduleAsync("autoconfig", "functions-async", Duration.ofMinutes(5))
						.get(10, TimeUnit.SECONDS);
					assertThat(context.getBean(ReactiveDelayedTaskScheduler.class)
						.find("autoconfig", async)
						.block(Duration.ofSeconds(10))).isNotNull();
				}
			});
	}

	@Test
	void runShouldBindPropertiesIntoTheStoreSettings() {
		this.runner
			.withPropertyValues("delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.max-deliveries=4", "delayed-tasks.dead-letter.retention=7d",
					"delayed-tasks.dead-letter.max-count=10", "delayed-tasks.producer.max-payload-size=1KB",
					"delayed-tasks.retry.max-retries=1")
			.run((context) -> {
				StoreSettings settings = context.getBean(StoreSettings.class);
				assertThat(settings.leaseDuration()).isEqualTo(Duration.ofSeconds(2));
				assertThat(settings.reapGrace()).isEqualTo(Duration.ofMillis(500));
				assertThat(settings.maxDeliveries()).isEqualTo(4);
				assertThat(settings.deadLetterMaxAge()).isEqualTo(Duration.ofDays(7));
				assertThat(settings.deadLetterMaxCount()).isEqualTo(10);
				assertThat(context.getBean(DelayedTasksProperties.class).producer().maxPayloadSize())
					.isEqualTo(DataSize.ofKilobytes(1));
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				TaskId id = scheduler.schedule("bound", "x", Duration.ofMinutes(5));
				assertThat(scheduler.find("bound", id))
					.hasValueSatisfying((info) -> assertThat(info.maxAttempts()).isEqualTo(2));
			});
	}

	@Test
	void runShouldTrimDeadLettersOnEveryInstanceEvenAProducerOnlyOne() {
		this.runner.withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			assertThat(context).hasSingleBean(DeadLetterRetention.class);
			assertThat(context.getBean(DeadLetterRetention.class).isRunning()).isTrue();
		});
	}

	@Test
	void runWithAUserDeadLettersBeanShouldStillTrimDeadLetters() {
		DeadLetters mine = mock(DeadLetters.class);
		this.runner.withBean("myDeadLetters", DeadLetters.class, () -> mine).run((context) -> {
			assertThat(context.getBean(DeadLetters.class)).isSameAs(mine);
			assertThat(context).hasSingleBean(DeadLetterRetention.class);
		});
	}

	@Test
	void runWithAListenerShouldTellItWhatWasScheduled() {
		List<String> heard = new CopyOnWriteArrayList<>();
		DelayedTaskListener listener = new DelayedTaskListener() {

			@Override
			public void scheduled(String queue, ScheduleResult result) {
				heard.add(queue + ":" + result.id() + ":" + result.outcome());
			}

		};
		this.runner.withBean(DelayedTaskListener.class, () -> listener).run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TaskId id = scheduler.schedule(TaskRequest.of("heard", "x").id("heard-1").delay(Duration.ofMinutes(5)));
			scheduler.schedule(TaskRequest.of("heard", "x").id("heard-1").delay(Duration.ofMinutes(5)));
			assertThat(heard).containsExactly("heard:" + id + ":CREATED", "heard:" + id + ":EXISTING");
		});
	}

	@Test
	void runWithAUserSchedulerShouldBackOff() {
		DelayedTaskScheduler mine = mock(DelayedTaskScheduler.class);
		this.runner.withBean("myScheduler", DelayedTaskScheduler.class, () -> mine)
			.run((context) -> assertThat(context.getBean(DelayedTaskScheduler.class)).isSameAs(mine));
	}

	@Test
	void runWhenRedisHoldsAnotherLayoutShouldFailFastAndSayWhatToDo() {
		String prefix = this.redis.keyPrefix() + "-layout";
		this.runner.withPropertyValues("delayed-tasks.key-prefix=" + prefix).run((context) -> {
			StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
			template.opsForSet().add(prefix + ":queues", "old");
			template.opsForHash().put(PartitionKeys.of(prefix, "old").meta(), "v", "99");
		});
		this.runner.withPropertyValues("delayed-tasks.key-prefix=" + prefix).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).isInstanceOf(DelayedTaskException.class)
				.hasMessageContaining("Queue 'old'")
				.hasMessageContaining("layout version 99")
				.hasMessageContaining("delayed-tasks.key-prefix");
		});
	}

}

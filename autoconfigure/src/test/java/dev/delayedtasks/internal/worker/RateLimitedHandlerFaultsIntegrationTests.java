package dev.delayedtasks.internal.worker;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.RateLimitedException;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Faults around "Slowing down when a downstream says so" (docs/flow-control.md): a
 * handler's exception that breaks the search for a {@link RateLimitedException} among its
 * causes, and a release whose reply is lost after it reached Redis.
 */
@WithRedis
class RateLimitedHandlerFaultsIntegrationTests {

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	RateLimitedHandlerFaultsIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = ShortLeases.runner(redis).withUserConfiguration(BendingHandler.class);
	}

	/**
	 * A handler's exception whose getCause() throws, met while looking for a
	 * RateLimitedException among the causes: the run still ends as a failure with a
	 * retry, not with the handler thread dead and the lease extended for ever.
	 */
	@Test
	void anExceptionWhoseGetCauseThrowsStillEndsTheRunWithAnOutcome() {
		run("review-cause", "bad-cause", (context, log, heard) -> {
			TaskId id = context.getBean(DelayedTaskScheduler.class)
				.schedule(TaskRequest.of("review-cause", "bad-cause"));
			await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(5)).until(() -> log.size() >= 1);
			// Retried (a back-off), or at worst run again after its lease.
			await().dontCatchUncaughtExceptions()
				.atMost(ShortLeases.REDELIVERY.plusSeconds(5))
				.untilAsserted(() -> assertThat(heard.retried.contains(id) || log.of(id).size() > 1)
					.as("task %s got an outcome or came back; lease in Redis: %s", id, leaseOf(context, id))
					.isTrue());
		});
	}

	/**
	 * A release with a hold that reached Redis but whose reply was lost (a command
	 * timeout): retried, it finds the token gone and reports a run twice to listeners,
	 * and never tells rateLimited.
	 */
	@Test
	void aReleaseWhoseReplyWasLostIsNotReportedAsARunTwice() {
		this.runner.withUserConfiguration(LosingStoreConfiguration.class)
			.withBean(RunLog.class, RunLog::new)
			.withBean(Heard.class, Heard::new)
			.withPropertyValues("test.queue=review-lost", "test.instance=a")
			.run((context) -> {
				RunLog log = context.getBean(RunLog.class);
				Heard heard = context.getBean(Heard.class);
				TaskId id = context.getBean(DelayedTaskScheduler.class)
					.schedule(TaskRequest.of("review-lost", "limit-once"));
				await().atMost(Duration.ofSeconds(10)).until(() -> log.finishedCount() == 1);
				assertThat(log.of(id)).hasSize(2);
				assertThat(heard.stale).as("staleAcknowledgement (\"it ran twice\")").isEmpty();
				assertThat(heard.rateLimited).as("rateLimited heard").containsExactly(id);
			});
	}

	private void run(String queue, String mode, Attack attack) {
		this.runner.withBean(RunLog.class, RunLog::new)
			.withBean(Heard.class, Heard::new)
			.withPropertyValues("test.queue=" + queue, "test.instance=a")
			.run((context) -> attack.run(context, context.getBean(RunLog.class), context.getBean(Heard.class)));
	}

	private Object leaseOf(AssertableApplicationContext context, TaskId id) {
		Double score = context.getBean(StringRedisTemplate.class)
			.opsForZSet()
			.score(PartitionKeys.of(this.redis.keyPrefix(), "review-cause").lease(), id.value());
		return (score != null) ? "deadline in " + (score.longValue() - System.currentTimeMillis()) + " ms" : "none";
	}

	/** A store whose first release with a hold reaches Redis and then loses its reply. */
	@Configuration(proxyBeanMethods = false)
	static class LosingStoreConfiguration {

		@Bean
		TaskStore losingTaskStore(StoreScripts scripts, StoreSettings settings) {
			RedisTaskStore delegate = new RedisTaskStore(scripts, settings);
			AtomicBoolean loseOnce = new AtomicBoolean(true);
			return (TaskStore) Proxy.newProxyInstance(TaskStore.class.getClassLoader(),
					new Class<?>[] { TaskStore.class }, (proxy, method, args) -> {
						Object result;
						try {
							result = method.invoke(delegate, args);
						}
						catch (InvocationTargetException ex) {
							throw ex.getCause();
						}
						if (method.getName().equals("release") && args.length == 3 && !((Duration) args[2]).isZero()
								&& loseOnce.compareAndSet(true, false)) {
							throw new QueryTimeoutException("Redis command timed out (the script ran)");
						}
						return result;
					});
		}

	}

	@FunctionalInterface
	interface Attack {

		void run(AssertableApplicationContext context, RunLog log, Heard heard) throws Throwable;

	}

	static final class Heard implements DelayedTaskListener {

		final List<TaskId> succeeded = new CopyOnWriteArrayList<>();

		final List<TaskId> retried = new CopyOnWriteArrayList<>();

		final List<TaskId> rateLimited = new CopyOnWriteArrayList<>();

		final List<TaskId> stale = new CopyOnWriteArrayList<>();

		@Override
		public void succeeded(TaskContext context, Duration runTime) {
			this.succeeded.add(context.id());
		}

		@Override
		public void retried(TaskContext context, Throwable failure, Instant nextRunAt) {
			this.retried.add(context.id());
		}

		@Override
		public void rateLimited(TaskContext context, Duration retryAfter) {
			this.rateLimited.add(context.id());
		}

		@Override
		public void staleAcknowledgement(TaskContext context) {
			this.stale.add(context.id());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BendingHandler {

		private final RunLog log;

		private final String instance;

		BendingHandler(RunLog log, Environment environment) {
			this.log = log;
			this.instance = environment.getRequiredProperty("test.instance");
		}

		@DelayedTaskHandler(queue = "${test.queue}", concurrency = "2")
		void handle(String payload, TaskContext context) {
			RunLog.Run run = this.log.started(this.instance, context, payload);
			switch (payload) {
				case "bad-cause" -> throw new IllegalStateException("the partner API failed") {
					@Override
					public synchronized Throwable getCause() {
						throw new UnsupportedOperationException("lazy cause not available");
					}
				};
				case "limit-once" -> {
					if (this.log.of(context.id()).size() == 1) {
						throw new RateLimitedException(Duration.ofMillis(200));
					}
				}
				default -> {
				}
			}
			run.finished();
		}

	}

}

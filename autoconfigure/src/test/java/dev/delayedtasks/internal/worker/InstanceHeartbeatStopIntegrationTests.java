package dev.delayedtasks.internal.worker;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisInstanceRegistry.InstanceRecord;
import dev.delayedtasks.test.RedisKind;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.RedisServers;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link InstanceHeartbeat} at a graceful stop and through an outage: the instance stays
 * listed until its handlers have finished; a Redis outage is one warning and the reports
 * come back.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class InstanceHeartbeatStopIntegrationTests {

	private final TestRedis redis;

	InstanceHeartbeatStopIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	private static int count(String text, String part) {
		int n = 0;
		for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
			n++;
		}
		return n;
	}

	// Redis away: reports fail and recover with one WARN per outage.
	@Test
	void aRedisOutageIsOneWarnAndTheReportsRecover(CapturedOutput output) {
		RedisProcess server = RedisServers.fromEnvironment().startProcess(RedisKind.ANY, List.of());
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", server.port()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofMillis(500)).build());
		try (server) {
			factory.afterPropertiesSet();
			factory.start();
			StringRedisTemplate template = new StringRedisTemplate(factory);
			RedisInstanceRegistry registry = new RedisInstanceRegistry(template, "rv");
			InstanceHeartbeat heartbeat = new InstanceHeartbeat(registry, "hb-1", "app", List::of, Clock.systemUTC());
			heartbeat.report();
			assertThat(registry.alive().instances()).extracting(InstanceRecord::id).containsExactly("hb-1");
			for (int outage = 1; outage <= 2; outage++) {
				server.kill();
				heartbeat.report();
				heartbeat.report();
				heartbeat.report();
				assertThat(count(output.toString(), "to the instance registry failed")).isEqualTo(outage);
				server.restart();
				await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> {
					heartbeat.report();
					return count(output.toString(), "to the instance registry works again");
				}, (n) -> n >= 1);
				assertThat(registry.alive().instances()).extracting(InstanceRecord::id).containsExactly("hb-1");
			}
			assertThat(count(output.toString(), "to the instance registry works again")).isEqualTo(2);
		}
		finally {
			factory.destroy();
		}
	}

	// Graceful stop: listed while a handler still finishes its task; gone after.
	@Test
	void aGracefulStopIsListedUntilItsHandlersHaveFinished() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + this.redis.url(),
					"delayed-tasks.key-prefix=" + this.redis.keyPrefix(), "delayed-tasks.worker.shutdown-timeout=10s")
			.withUserConfiguration(SlowHandler.class)
			.run((context) -> {
				// Read on a connection of the test's own: the application's closes with
				// it.
				LettuceConnectionFactory observer = new LettuceConnectionFactory(
						LettuceConnectionFactory.createRedisConfiguration(this.redis.uri()));
				observer.afterPropertiesSet();
				observer.start();
				RedisInstanceRegistry registry = new RedisInstanceRegistry(new StringRedisTemplate(observer),
						this.redis.keyPrefix());
				String id = context.getBean(HandlerContainerFactory.class).instanceId();
				SlowHandler handler = context.getBean(SlowHandler.class);
				await().atMost(Duration.ofSeconds(15))
					.until(() -> registry.alive().instances().stream().anyMatch((i) -> i.id().equals(id)));
				context.getBean(DelayedTaskScheduler.class).enqueue("slow", "x");
				assertThat(handler.started.await(10, TimeUnit.SECONDS)).isTrue();
				CompletableFuture<Void> closing = CompletableFuture
					.runAsync(() -> ((ConfigurableApplicationContext) context.getSourceApplicationContext()).close());
				Thread.sleep(1500);
				assertThat(closing).isNotDone();
				assertThat(registry.alive().instances()).as("listed while its handler finishes")
					.extracting(InstanceRecord::id)
					.contains(id);
				handler.release.countDown();
				closing.get(20, TimeUnit.SECONDS);
				assertThat(registry.alive().instances()).extracting(InstanceRecord::id).doesNotContain(id);
				observer.destroy();
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class SlowHandler {

		final CountDownLatch started = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		@DelayedTaskHandler(queue = "slow")
		void handle(String payload) {
			this.started.countDown();
			long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
			// Ignores interrupts: a handler that finishes its work during the stop.
			while (this.release.getCount() > 0 && System.nanoTime() < end) {
				Thread.onSpinWait();
			}
		}

	}

}

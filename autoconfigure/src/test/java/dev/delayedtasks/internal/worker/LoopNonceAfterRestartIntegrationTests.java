package dev.delayedtasks.internal.worker;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A claim loop's nonce is new for every loop of an instance, also after the handler
 * registry was stopped and started again (context stop/start), which makes new
 * dispatchers: a loop that stop gave up on (stuck in a call to an unresponsive Redis)
 * recovers its lost claims by nonce after the next start, and must not give back the
 * tasks a later loop holds and runs.
 */
@WithRedis
class LoopNonceAfterRestartIntegrationTests {

	private static final String QUEUE = "loop-nonce-restart";

	static final LinkedBlockingQueue<String> TOKENS = new LinkedBlockingQueue<>();

	static volatile CountDownLatch release = new CountDownLatch(0);

	private final TestRedis redis;

	LoopNonceAfterRestartIntegrationTests(TestRedis redis) {
		this.redis = redis;
	}

	@Test
	void aLoopAfterARestartOfTheRegistryDoesNotReuseTheNoncesOfTheLoopBefore() {
		ShortLeases.runner(this.redis, "delayed-tasks.worker.block-timeout=300ms")
			.withUserConfiguration(Handlers.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				DelayedTaskHandlerRegistry registry = context.getBean(DelayedTaskHandlerRegistry.class);
				TaskStore store = context.getBean(TaskStore.class);
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				Thread.sleep(500);
				scheduler.enqueue(QUEUE, "before");
				String before = TOKENS.poll(10, TimeUnit.SECONDS);
				assertThat(before).isNotNull();

				registry.stop();
				registry.start();
				Thread.sleep(500);
				release = new CountDownLatch(1);
				try {
					scheduler.enqueue(QUEUE, "after");
					String after = TOKENS.poll(10, TimeUnit.SECONDS);
					assertThat(after).isNotNull();
					System.out.println("tokens before and after the restart: " + before + ", " + after);
					// What the loop before the restart does with a claim whose reply it
					// lost: recover it by its nonce.
					int recovered = store.recover(QUEUE, List.of(nonce(before)));
					assertThat(recovered)
						.as("a recovery by the nonce of a claim made before the restart gave back the task "
								+ "that a loop after the restart holds and runs (tokens %s, %s)", before, after)
						.isZero();
					assertThat(template.opsForZSet().zCard(PartitionKeys.of(this.redis.keyPrefix(), QUEUE).lease()))
						.isEqualTo(1);
					assertThat(loopNonce(after)).as("each loop's nonce is new").isNotEqualTo(loopNonce(before));
				}
				finally {
					release.countDown();
				}
			});
	}

	private static String nonce(String token) {
		return token.substring(0, token.lastIndexOf(':'));
	}

	private static String loopNonce(String token) {
		String nonce = nonce(token);
		int end = nonce.length();
		for (char separator : new char[] { '.', '-' }) {
			int at = nonce.indexOf(separator);
			if (at >= 0) {
				end = Math.min(end, at);
			}
		}
		return nonce.substring(0, end);
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		@DelayedTaskHandler(queue = QUEUE)
		void handle(String payload, TaskContext context) throws InterruptedException {
			TOKENS.add(context.leaseToken());
			release.await(20, TimeUnit.SECONDS);
		}

	}

}

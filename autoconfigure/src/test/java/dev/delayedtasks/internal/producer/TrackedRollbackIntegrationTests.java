package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "forget affects only its own waiter" / "one caller's failure never fails or cuts short
 * another's". A tracked afterCommit request of a live id that rolls back must not end
 * another caller's awaitOutcome of that id.
 */
@WithRedis
class TrackedRollbackIntegrationTests {

	private static final String QUEUE = "wd-forget";

	private final ApplicationContextRunner runner;

	TrackedRollbackIntegrationTests(TestRedis redis) {
		this.runner = TransactionalApp.runner(redis);
	}

	@Test
	void aRolledBackTrackedRequestDoesNotEndAnotherCallersWait() {
		this.runner.run((context) -> {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			TransactionTemplate transaction = context.getBean(TransactionTemplate.class);
			TaskId id = scheduler.schedule(TaskRequest.of(QUEUE, "live").id("fg-1").delay(Duration.ofHours(1)));
			CompletableFuture<Object> other = CompletableFuture.supplyAsync(() -> {
				try {
					return scheduler.awaitOutcome(QUEUE, id, Duration.ofSeconds(10));
				}
				catch (RuntimeException ex) {
					return ex;
				}
			});
			Thread.sleep(500);
			transaction.executeWithoutResult((status) -> {
				scheduler.track(TaskRequest.of(QUEUE, "again").id("fg-1").afterCommit());
				status.setRollbackOnly();
			});
			Thread.sleep(500);
			assertThat(other).as("another caller's awaitOutcome is not cut short by the rollback").isNotDone();
			assertThat(scheduler.cancel(QUEUE, id)).isTrue();
			Object result = other.get(10, TimeUnit.SECONDS);
			assertThat(result).isInstanceOfSatisfying(Optional.class, (outcome) -> assertThat(outcome).get()
				.satisfies((ended) -> assertThat(((TaskOutcome) ended).kind()).isEqualTo(TaskOutcome.Kind.CANCELLED)));
		});
	}

}

package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.List;

import dev.delayedtasks.internal.store.TaskHandoff;
import dev.delayedtasks.internal.store.TaskHandoffs;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;

import static org.awaitility.Awaitility.await;

/**
 * Waits until a queue's dispatcher in an application is idle: its last claim found
 * nothing it could take and it waits on the wake list with room to spare. Only then does
 * a {@code schedule} call hand it a task.
 */
final class IdleDispatcher {

	private IdleDispatcher() {
	}

	static void waitFor(AssertableApplicationContext context, String queue) {
		TaskHandoffs handoffs = context.getBean(TaskHandoffs.class);
		await().atMost(Duration.ofSeconds(5)).until(() -> {
			TaskHandoff.Reservation probe = handoffs.reserve(queue, 1);
			if (probe == null) {
				return false;
			}
			probe.accept(List.of(), 0, System.nanoTime());
			return true;
		});
	}

}

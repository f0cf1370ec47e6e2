package dev.delayedtasks.dashboard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.dashboard.DashboardActions.GroupStep;
import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.internal.admin.RedisDeadLetters;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two group actions at once on one queue (two users, or one user in two tabs), their
 * steps alternating: each removes dead letters the other walks past, and still each
 * deletes its whole group (the steps walk by dead-letter time, which removals do not
 * shift, not by rank).
 */
@WithRedis
class DashboardConcurrentGroupActionsIntegrationTests {

	@Test
	void twoGroupDeletesAtOnceEachDeleteTheirWholeGroup(TestRedis redis) {
		try (ConfigurableApplicationContext context = DashboardTestApplications.start(redis,
				new Class<?>[] { Secured.class, Refusing.class })) {
			DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
			RedisDeadLetters deadLetters = context.getBean(RedisDeadLetters.class);
			List<TaskRequest> requests = new ArrayList<>();
			for (int i = 0; i < 180; i++) {
				requests.add(TaskRequest.of("review-groups", (i % 6 == 5) ? "b" : "a").maxAttempts(1));
			}
			scheduler.scheduleAll(requests);
			await().atMost(Duration.ofSeconds(30)).until(() -> deadLetters.count("review-groups") == 180);
			DashboardActions actions = new DashboardActions(null, deadLetters, context.getBean(RecurringTasks.class),
					scheduler, context.getBean(DashboardReads.class), context.getBean(DashboardTasks.class));
			String reason = "retries-exhausted";
			String a = IllegalStateException.class.getName();
			String b = IllegalArgumentException.class.getName();
			Long fromA = null;
			Long fromB = null;
			long skipA = 0;
			long skipB = 0;
			boolean doneA = false;
			boolean doneB = false;
			int steps = 0;
			while ((!doneA || !doneB) && steps++ < 20) {
				if (!doneA) {
					GroupStep step = actions.groupStep("userA", "review-groups", "delete", reason, a, fromA, skipA);
					fromA = step.from();
					skipA = step.skip();
					doneA = step.done();
				}
				if (!doneB) {
					GroupStep step = actions.groupStep("userB", "review-groups", "delete", reason, b, fromB, skipB);
					fromB = step.from();
					skipB = step.skip();
					doneB = step.done();
				}
			}
			assertThat(doneA && doneB).isTrue();
			List<DeadLetter> left = deadLetters.list("review-groups", 1000);
			assertThat(left).as("both actions said done; dead letters of their groups left: " + left.size()).isEmpty();
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Refusing {

		@DelayedTaskHandler(queue = "review-groups")
		void handle(String payload, TaskContext context) {
			if (payload.equals("a")) {
				throw new IllegalStateException("a refused");
			}
			throw new IllegalArgumentException("b refused");
		}

	}

}

package dev.delayedtasks.dashboard;

import java.time.Duration;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.dashboard.DashboardTestApplications.Handlers;
import dev.delayedtasks.dashboard.DashboardTestApplications.Secured;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard of instance A (producer-only: no worker) acting on the tasks that
 * instance B handles, and after B stopped.
 */
@WithRedis
class DashboardTwoInstancesIntegrationTests {

	private static final String D = DashboardTestApplications.D;

	@Test
	void theDashboardOfOneInstanceActsOnTheTasksOfAnother(TestRedis redis) throws Exception {
		try (ConfigurableApplicationContext a = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class },
				"--delayed-tasks.worker.enabled=false")) {
			ConfigurableApplicationContext b = DashboardTestApplications.start(redis, new Class<?>[] { Secured.class });
			try {
				DelayedTaskScheduler onB = b.getBean(DelayedTaskScheduler.class);
				Handlers handlers = b.getBean(Handlers.class);
				TaskId run = onB.schedule("work", "x", Duration.ofHours(1));
				TaskId cancel = onB.schedule("work", "x", Duration.ofHours(1));
				Http writerOnA = Http.as(a, DashboardTestApplications.WRITER);
				assertThat(Http.as(a, DashboardTestApplications.READER).get(D + "/api/queues").body())
					.contains("\"name\":\"work\"");
				assertThat(writerOnA.write(D, D + "/api/task/run" + Http.query("queue", "work", "id", run.value()))
					.statusCode()).isEqualTo(200);
				await().atMost(Duration.ofSeconds(10)).until(() -> handlers.ran("work").contains(run));
				assertThat(
						writerOnA.write(D, D + "/api/task/cancel" + Http.query("queue", "work", "id", cancel.value()))
							.statusCode())
					.isEqualTo(200);
				assertThat(onB.find("work", cancel)).isEmpty();
				// A pause on A stops B's claims.
				assertThat(writerOnA.write(D, D + "/api/queue/pause" + Http.query("name", "work")).statusCode())
					.isEqualTo(200);
				TaskId held = onB.schedule(TaskRequest.of("work", "x").delay(Duration.ofMillis(1)));
				Thread.sleep(1500);
				assertThat(handlers.ran("work")).doesNotContain(held);
				assertThat(writerOnA.write(D, D + "/api/queue/resume" + Http.query("name", "work")).statusCode())
					.isEqualTo(200);
				await().atMost(Duration.ofSeconds(10)).until(() -> handlers.ran("work").contains(held));
				// B stops: A still reads, and a run waits for a handler.
				TaskId later = onB.schedule("work", "x", Duration.ofHours(1));
				b.close();
				assertThat(writerOnA.write(D, D + "/api/task/run" + Http.query("queue", "work", "id", later.value()))
					.statusCode()).isEqualTo(200);
				assertThat(a.getBean(DelayedTaskScheduler.class).find("work", later).map(TaskInfo::state))
					.hasValue(TaskState.READY);
				assertThat(Http.as(a, DashboardTestApplications.READER).get(D + "/api/queue?name=work").statusCode())
					.isEqualTo(200);
				assertThat(a.getBean(QueueControl.class).isPaused("work")).isFalse();
			}
			finally {
				b.close();
			}
		}
	}

}

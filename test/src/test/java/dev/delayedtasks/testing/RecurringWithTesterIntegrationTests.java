package dev.delayedtasks.testing;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.annotation.Recurring;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A {@code @Recurring} handler tested with the test kit, as an application would, the
 * test clock moved with {@link DelayedTasksTester#advanceTime}.
 */
@SpringBootTest(classes = RecurringWithTesterIntegrationTests.App.class)
@AutoConfigureDelayedTasks
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RecurringWithTesterIntegrationTests {

	@Autowired
	private DelayedTasksTester tasks;

	@Autowired
	private RecurringTasks recurring;

	@Autowired
	private App.Reports reports;

	/** Advancing the test clock by the rate runs the next tick. */
	@Test
	@Order(1)
	void advancingTheClockByOneRateRunsTheNextTick() {
		assertThat(this.recurring.find("rv-minutely")).isPresent();
		this.tasks.advanceTime("rv-reports", Duration.ofMinutes(1));
		await().atMost(Duration.ofSeconds(10)).until(() -> this.reports.ticks.size() >= 1);
		assertThat(this.recurring.find("rv-minutely").orElseThrow().missedTicks()).isZero();
	}

	/**
	 * The second test method of the same (cached) context: the tester cleared the keys
	 * after the first one; the application's declared schedule must still be there.
	 */
	@Test
	@Order(2)
	void theDeclaredScheduleIsStillThereInTheNextTestMethod() {
		assertThat(this.recurring.find("rv-minutely")).as("the @Recurring schedule after DelayedTasksTester.clear()")
			.isPresent();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(App.Reports.class)
	static class App {

		static class Reports {

			final List<Long> ticks = new CopyOnWriteArrayList<>();

			@DelayedTaskHandler(queue = "rv-reports")
			@Recurring(id = "rv-minutely", fixedRate = "1m")
			void report(String payload, TaskContext context) {
				this.ticks.add(context.dueAt().toEpochMilli());
			}

		}

	}

}

package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.MisfirePolicy;
import dev.delayedtasks.OverlapPolicy;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.actuate.DelayedTasksHealthIndicator;
import dev.delayedtasks.actuate.RecurringTasksEndpoint;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.annotation.Recurring;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksHealthContributorAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksMetricsAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksRecurringEndpointAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksSnapshotsAutoConfiguration;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The three ways to declare a recurring schedule, in an application context on a real
 * Redis: {@code @Recurring}, {@code delayed-tasks.recurring.<id>.*} and the
 * {@link RecurringTasks} API; startup failures for bad declarations; the endpoint, the
 * metrics and the health detail.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class RecurringAutoConfigurationIntegrationTests {

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	RecurringAutoConfigurationIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksSnapshotsAutoConfiguration.class,
					DelayedTasksMetricsAutoConfiguration.class, DelayedTasksHealthContributorAutoConfiguration.class,
					DelayedTasksRecurringEndpointAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues(redis.connectionProperties())
			.withPropertyValues("delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.worker.shutdown-timeout=1s",
					"delayed-tasks.snapshot-interval=200ms",
					"management.endpoints.web.exposure.include=recurringtasks");
	}

	@Test
	void anAnnotatedHandlerRunsEveryTickOfItsScheduleWithItsPayload() {
		this.runner.withUserConfiguration(AnnotatedHandler.class).run((context) -> {
			AnnotatedHandler handler = context.getBean(AnnotatedHandler.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> handler.ticks.size() >= 3);
			assertThat(handler.payloads).containsOnly("{\"report\":\"daily\"}");
			assertThat(handler.ticks).allSatisfy((tick) -> assertThat(tick % 1000).isZero());
			RecurringScheduleInfo info = context.getBean(RecurringTasks.class).find("ctx-annotated").orElseThrow();
			assertThat(info.origin()).isEqualTo("annotation");
			assertThat(info.queue()).isEqualTo("ctx-annotated-queue");
			assertThat(info.expression()).isEqualTo("every PT1S");
			assertThat(info.overlap()).isEqualTo(OverlapPolicy.SKIP);
			assertThat(info.lastTick()).isNotNull();
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(
						context.getBean(RecurringTasks.class).find("ctx-annotated").orElseThrow().lastOutcome())
					.isEqualTo("succeeded"));
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("delayed.tasks.recurring.occurrences")
				.tag("schedule", "ctx-annotated")
				.counter()
				.count()).isGreaterThanOrEqualTo(3);
			RecurringTasksEndpoint endpoint = context.getBean(RecurringTasksEndpoint.class);
			assertThat(endpoint.schedules(null, null).schedules()).extracting(RecurringScheduleInfo::id)
				.contains("ctx-annotated");
			assertThat(endpoint.scheduleAction("ctx-annotated", "pause").paused()).isTrue();
			int ran = handler.ticks.size();
			Thread.sleep(2500);
			assertThat(handler.ticks).as("no run while paused").hasSizeLessThanOrEqualTo(ran + 1);
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.scheduleAction("ctx-annotated", "trigger"))
				.withMessageContaining("paused");
			assertThat(endpoint.scheduleAction("ctx-annotated", "resume").paused()).isFalse();
			long before = endpoint.schedule("ctx-annotated").occurrences();
			assertThat(endpoint.scheduleAction("ctx-annotated", "trigger").occurrences()).isGreaterThan(before);
			assertThat(endpoint.scheduleAction("no-such-schedule", "trigger")).isNull();
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.scheduleAction("ctx-annotated", "explode"))
				.withMessageContaining("Unknown action 'explode'");
			assertThat(endpoint.scheduleAction("no-such-schedule", "pause")).isNull();
			context.getBean(RecurringTasks.class).remove("ctx-annotated");
		});
	}

	@Test
	void aScheduleInPropertiesIsUpsertedAtStartupAndRemovedWhenDisabled() {
		this.runner
			.withPropertyValues("delayed-tasks.recurring.ctx-nightly.queue=ctx-reports",
					"delayed-tasks.recurring.ctx-nightly.cron=0 0 2 * * *",
					"delayed-tasks.recurring.ctx-nightly.zone=Europe/Paris",
					"delayed-tasks.recurring.ctx-nightly.misfire=run-once",
					"delayed-tasks.recurring.ctx-nightly.payload={\"kind\":\"nightly\"}")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RecurringScheduleInfo info = context.getBean(RecurringTasks.class).find("ctx-nightly").orElseThrow();
				assertThat(info.origin()).isEqualTo("properties");
				assertThat(info.zone()).isEqualTo(ZoneId.of("Europe/Paris"));
				assertThat(info.misfire()).isEqualTo(MisfirePolicy.RUN_ONCE);
				assertThat(info.nextTick().atZone(ZoneId.of("Europe/Paris")).getHour()).isEqualTo(2);
			});
		this.runner.withPropertyValues("delayed-tasks.recurring.ctx-nightly.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RecurringTasks.class).find("ctx-nightly")).isEmpty();
		});
	}

	@Test
	void enabledFalseSwitchesOffAnAnnotatedScheduleWithTheSameId() throws InterruptedException {
		this.runner.withUserConfiguration(AnnotatedHandler.class)
			.run((context) -> assertThat(context.getBean(RecurringTasks.class).find("ctx-annotated")).isPresent());
		this.runner.withUserConfiguration(AnnotatedHandler.class)
			.withPropertyValues("delayed-tasks.recurring.ctx-annotated.enabled=false")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(RecurringTasks.class).find("ctx-annotated")).isEmpty();
				Thread.sleep(2500);
				assertThat(context.getBean(AnnotatedHandler.class).ticks).isEmpty();
			});
	}

	@Test
	void propertiesOverrideTheFieldsTheySetOfAnAnnotatedScheduleAndKeepTheOthers() {
		this.runner.withUserConfiguration(AnnotatedHandler.class)
			.withPropertyValues("delayed-tasks.recurring.ctx-annotated.cron=0 0 3 * * *",
					"delayed-tasks.recurring.ctx-annotated.zone=Europe/Paris",
					"delayed-tasks.recurring.ctx-annotated.misfire=run-once")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RecurringScheduleInfo info = context.getBean(RecurringTasks.class).find("ctx-annotated").orElseThrow();
				assertThat(info.expression()).as("the cron of the properties replaces the annotation's rate")
					.isEqualTo("0 0 3 * * *");
				assertThat(info.zone()).isEqualTo(ZoneId.of("Europe/Paris"));
				assertThat(info.misfire()).isEqualTo(MisfirePolicy.RUN_ONCE);
				assertThat(info.queue()).as("from the annotation's handler").isEqualTo("ctx-annotated-queue");
				assertThat(info.overlap()).as("from the annotation").isEqualTo(OverlapPolicy.SKIP);
				assertThat(info.nextTick().atZone(ZoneId.of("Europe/Paris")).getHour()).isEqualTo(3);
				assertThat(info.origin()).isEqualTo("properties");
				context.getBean(RecurringTasks.class).remove("ctx-annotated");
			});
		this.runner.withUserConfiguration(AnnotatedHandler.class)
			.withPropertyValues("delayed-tasks.recurring.ctx-annotated.payload={\"report\":\"weekly\"}")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				AnnotatedHandler handler = context.getBean(AnnotatedHandler.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> !handler.payloads.isEmpty());
				assertThat(handler.payloads).as("the annotation's rate, with the payload of the properties")
					.containsOnly("{\"report\":\"weekly\"}");
				assertThat(context.getBean(RecurringTasks.class).find("ctx-annotated").orElseThrow().expression())
					.isEqualTo("every PT1S");
				context.getBean(RecurringTasks.class).remove("ctx-annotated");
			});
		this.runner.withUserConfiguration(AnnotatedHandler.class)
			.withPropertyValues("delayed-tasks.recurring.ctx-annotated.zone=Mars/Olympus")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delayed-tasks.recurring.ctx-annotated over @Recurring on")
				.hasMessageContaining("zone 'Mars/Olympus' is not a zone id"));
	}

	@Test
	void theHealthSnapshotAndTheEndpointReadAtMostMaxSchedulesDeclaredOnesFirst() {
		this.runner.withUserConfiguration(AnnotatedHandler.class)
			.withPropertyValues("delayed-tasks.monitoring.max-schedules=2", "test.rate=1h")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RecurringTasks recurring = context.getBean(RecurringTasks.class);
				for (int i = 0; i < 5; i++) {
					recurring
						.upsert(RecurringSchedule.fixedRate("ctx-page-" + i, "ctx-page-queue", Duration.ofHours(1)));
				}
				List<String> all = recurring.list().stream().map(RecurringScheduleInfo::id).toList();
				assertThat(all).hasSizeGreaterThanOrEqualTo(6);
				RecurringSnapshot snapshot = context.getBean(RecurringSnapshot.class);
				await().atMost(Duration.ofSeconds(5)).until(() -> snapshot.known() == all.size());
				assertThat(snapshot.schedules()).extracting(RecurringScheduleInfo::id)
					.as("the declared schedule, then the first other by id")
					.containsExactly("ctx-annotated",
							all.stream().filter((id) -> !id.equals("ctx-annotated")).findFirst().orElseThrow());
				assertThat(snapshot.unreported()).isEqualTo(all.size() - 2);
				Map<String, Object> details = context.getBean(DelayedTasksHealthIndicator.class)
					.health(true)
					.getDetails();
				assertThat(details).containsEntry("knownRecurringSchedules", (long) all.size())
					.containsEntry("unreportedRecurringSchedules", (long) all.size() - 2);
				RecurringTasksEndpoint endpoint = context.getBean(RecurringTasksEndpoint.class);
				List<String> paged = new ArrayList<>();
				String after = null;
				do {
					RecurringTasksEndpoint.SchedulesDescriptor page = endpoint.schedules(after, 10);
					assertThat(page.schedules()).as("a limit above max-schedules is capped")
						.hasSizeLessThanOrEqualTo(2);
					assertThat(page.total()).isEqualTo(all.size());
					page.schedules().forEach((schedule) -> paged.add(schedule.id()));
					after = page.next();
				}
				while (after != null);
				assertThat(paged).as("every schedule once, by id").isEqualTo(all);
				assertThat(endpoint.schedules(null, 1).schedules()).hasSize(1);
				for (int i = 0; i < 5; i++) {
					recurring.remove("ctx-page-" + i);
				}
				recurring.remove("ctx-annotated");
			});
	}

	@Test
	void aScheduleThatCannotBeRegisteredDoesNotKeepTheOthersFromRegistering(CapturedOutput output) {
		this.runner.run((context) -> context.getBean(RecurringTasks.class)
			.upsert(RecurringSchedule.fixedRate("ctx-moved", "ctx-moved-from", Duration.ofHours(1))));
		this.runner
			.withPropertyValues("delayed-tasks.recurring.ctx-moved.queue=ctx-moved-to",
					"delayed-tasks.recurring.ctx-moved.fixed-rate=1h",
					"delayed-tasks.recurring.ctx-zz-later.queue=ctx-later-queue",
					"delayed-tasks.recurring.ctx-zz-later.fixed-rate=1h")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RecurringTasks recurring = context.getBean(RecurringTasks.class);
				assertThat(recurring.find("ctx-zz-later")).isPresent();
				assertThat(recurring.find("ctx-moved").orElseThrow().queue()).isEqualTo("ctx-moved-from");
				assertThat(output).contains("Could not register recurring schedule 'ctx-moved'");
				recurring.remove("ctx-moved");
				recurring.remove("ctx-zz-later");
			});
	}

	@Test
	void scheduleCreatedThroughTheApiPersistsAcrossRestarts() {
		this.runner.run((context) -> context.getBean(RecurringTasks.class)
			.upsert(RecurringSchedule.fixedRate("ctx-api", "ctx-api-queue", Duration.ofHours(1))));
		this.runner.run((context) -> {
			RecurringScheduleInfo info = context.getBean(RecurringTasks.class).find("ctx-api").orElseThrow();
			assertThat(info.origin()).isEqualTo("api");
			assertThat(info.occurrences()).isEqualTo(2);
			context.getBean(RecurringTasks.class).remove("ctx-api");
		});
	}

	@Test
	void aScheduleMissingTicksShowsInTheHealthWithoutMakingItDown() {
		this.runner.run((context) -> {
			RecurringTasks recurring = context.getBean(RecurringTasks.class);
			recurring.upsert(RecurringSchedule.fixedRate("ctx-missing", "ctx-no-handler", Duration.ofSeconds(1))
				.misfireThreshold(Duration.ofSeconds(1)));
			// Nobody runs its queue: each repair pass or upsert finds its ticks missed.
			Thread.sleep(3500);
			((RedisRecurringTasks) recurring).ensure("ctx-missing");
			DelayedTasksHealthIndicator health = context.getBean(DelayedTasksHealthIndicator.class);
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(health.health(true).getDetails().get("recurringMissingTicks"))
					.isEqualTo(List.of("ctx-missing")));
			assertThat(health.health(true).getStatus().getCode()).isEqualTo("UP");
			assertThat(context.getBean(MeterRegistry.class)
				.get("delayed.tasks.recurring.missed")
				.tag("schedule", "ctx-missing")
				.counter()
				.count()).isPositive();
			recurring.remove("ctx-missing");
		});
	}

	@Test
	void badDeclarationsFailStartupNamingTheScheduleAndTheProblem() {
		this.runner.withUserConfiguration(BadCronHandler.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("@Recurring on recurringAutoConfigurationIntegrationTests.BadCronHandler#handle")
				.hasMessageContaining("Recurring schedule 'ctx-bad': cron expression '0 0 25 * * *' is invalid"));
		this.runner.withUserConfiguration(NotAHandler.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("the method must also be a @DelayedTaskHandler"));
		this.runner.withPropertyValues("delayed-tasks.recurring.ctx-zone.queue=q",
				"delayed-tasks.recurring.ctx-zone.cron=@daily", "delayed-tasks.recurring.ctx-zone.zone=Mars/Olympus")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining(
						"delayed-tasks.recurring.ctx-zone: Recurring schedule 'ctx-zone': zone 'Mars/Olympus' is not a zone id"));
		this.runner
			.withPropertyValues("delayed-tasks.recurring.ctx-rate.queue=q",
					"delayed-tasks.recurring.ctx-rate.fixed-rate=500ms")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("Recurring schedule 'ctx-rate': fixed rate PT0.5S is too short"));
		this.runner.withPropertyValues("delayed-tasks.recurring.ctx-queue.cron=@daily")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining(
						"delayed-tasks.recurring.ctx-queue: Recurring schedule 'ctx-queue': the queue is missing"));
	}

	@Configuration(proxyBeanMethods = false)
	static class AnnotatedHandler {

		final Set<Long> ticks = ConcurrentHashMap.newKeySet();

		final Set<String> payloads = ConcurrentHashMap.newKeySet();

		@DelayedTaskHandler(queue = "ctx-annotated-queue")
		@Recurring(id = "ctx-annotated", fixedRate = "${test.rate:1s}", payload = "{\"report\":\"daily\"}",
				overlap = "skip", misfireThreshold = "5s")
		void handle(Map<String, String> payload, TaskContext context) {
			this.payloads.add("{\"report\":\"" + payload.get("report") + "\"}");
			this.ticks.add(context.dueAt().toEpochMilli());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadCronHandler {

		@DelayedTaskHandler(queue = "ctx-bad-queue")
		@Recurring(id = "ctx-bad", cron = "0 0 25 * * *")
		void handle(JsonNode payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NotAHandler {

		@Recurring(id = "ctx-not-a-handler", cron = "@daily")
		void handle() {
		}

		@Bean
		String something() {
			return "x";
		}

	}

}

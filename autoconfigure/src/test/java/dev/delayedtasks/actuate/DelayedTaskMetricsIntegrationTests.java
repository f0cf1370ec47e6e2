package dev.delayedtasks.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimitedException;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksMetricsAutoConfiguration;
import dev.delayedtasks.autoconfigure.DelayedTasksSnapshotsAutoConfiguration;
import dev.delayedtasks.internal.actuate.BoundedQueueTags;
import dev.delayedtasks.internal.actuate.QueueSnapshots;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.Lease;
import dev.delayedtasks.internal.store.QueueStats;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.internal.store.TaskHandoff;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.TimerTick;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.RedisKind;
import dev.delayedtasks.test.RedisServer;
import dev.delayedtasks.test.RedisServers;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.search.MeterNotFoundException;
import io.micrometer.core.instrument.search.Search;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Micrometer meters of delayed tasks after real runs on a real Redis: counters by
 * queue, handler, outcome and reason; lateness, end-to-end and run-time timers (the last
 * from the run observation alone); and queue gauges read from the background snapshot,
 * never from Redis at scrape time.
 */
@WithRedis
class DelayedTaskMetricsIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	DelayedTaskMetricsIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = runner(redis.url(), redis.keyPrefix());
	}

	private static ApplicationContextRunner runner(String url, String keyPrefix) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksSnapshotsAutoConfiguration.class,
					MetricsAutoConfiguration.class, DelayedTasksMetricsAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + url, "delayed-tasks.key-prefix=" + keyPrefix,
					"delayed-tasks.worker.lease-duration=2s", "delayed-tasks.worker.reap-grace=500ms",
					"delayed-tasks.worker.timer-ttl=1s", "delayed-tasks.worker.shutdown-timeout=1s",
					"delayed-tasks.snapshot-interval=200ms", "delayed-tasks.retry.delay=100ms",
					"delayed-tasks.retry.jitter=0ms", "delayed-tasks.retry.max-retries=1")
			.withUserConfiguration(Meters.class);
	}

	@Test
	void countersAndTimersCountRunsRetriesDeadLettersAndCancellationsByQueueHandlerOutcomeAndReason() {
		String queue = "m-counts";
		this.runner.withPropertyValues("test.queue=" + queue)
			.withUserConfiguration(MetricsHandler.class)
			.run((context) -> {
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				scheduler.enqueue(queue, new Command("succeed"));
				scheduler.enqueue(queue, new Command("fail-once"));
				scheduler.enqueue(queue, new Command("non-retryable"));
				TaskRequest later = TaskRequest.of(queue, new Command("succeed"))
					.id("m-counts-later")
					.delay(Duration.ofHours(1));
				assertThat(scheduler.submit(later).outcome()).isEqualTo(ScheduleResult.Outcome.CREATED);
				assertThat(scheduler.submit(later).outcome()).isEqualTo(ScheduleResult.Outcome.EXISTING);
				assertThat(scheduler.cancel(queue, TaskId.of("m-counts-later"))).isTrue();
				String handler = queue + "-handler";
				Tags handlerTags = Tags.of("queue", queue, "handler", handler);
				// Every meter of the four runs is recorded, the last ones just after the
				// outcome counters (a meter not registered yet is looked up again).
				await().atMost(WAIT).ignoreExceptionsInstanceOf(MeterNotFoundException.class).untilAsserted(() -> {
					assertThat(meters.get("delayed.tasks.scheduled")
						.tags("queue", queue, "outcome", "created")
						.counter()
						.count()).isEqualTo(4);
					assertThat(meters.get("delayed.tasks.scheduled")
						.tags("queue", queue, "outcome", "existing")
						.counter()
						.count()).isEqualTo(1);
					assertThat(meters.get("delayed.tasks.started").tags(handlerTags).counter().count()).isEqualTo(4);
					assertThat(meters.get("delayed.tasks.succeeded").tags(handlerTags).counter().count()).isEqualTo(2);
					assertThat(meters.get("delayed.tasks.retried").tags(handlerTags).counter().count()).isEqualTo(1);
					assertThat(meters.get("delayed.tasks.dead.lettered")
						.tags(handlerTags)
						.tag("reason", "non-retryable")
						.counter()
						.count()).isEqualTo(1);
					assertThat(meters.get("delayed.tasks.cancelled").tags("queue", queue).counter().count())
						.isEqualTo(1);
					assertThat(meters.find("delayed.tasks.stale").tag("queue", queue).counters()).isEmpty();
					// Every counter of a handler run has exactly the queue
					// and handler tags (and the reason for dead letters).
					for (String name : List.of("started", "succeeded", "retried")) {
						assertThat(meters.find("delayed.tasks." + name).tag("queue", queue).counters()).singleElement()
							.satisfies((counter) -> assertThat(counter.getId().getTags())
								.containsExactlyInAnyOrderElementsOf(handlerTags));
					}
					Timer lateness = meters.get("delayed.tasks.lateness").tags("queue", queue).timer();
					assertThat(lateness.getId().getTags()).containsExactly(Tag.of("queue", queue));
					assertThat(lateness.count()).isEqualTo(4);
					// Retries wait 100 ms in the scheduled set, but lateness counts
					// from the due time: every run started within a second of it.
					assertThat(lateness.max(TimeUnit.MILLISECONDS)).isLessThan(1000);
					Timer endToEnd = meters.get("delayed.tasks.end.to.end").tags("queue", queue).timer();
					assertThat(endToEnd.count()).isEqualTo(2);
					// The flaky task's end-to-end time spans its retry back-off.
					assertThat(endToEnd.max(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(100);
					// Run time comes from the run observation
					// only: one timer, one sample a run.
					Collection<Timer> runTimers = meters.find("delayed.tasks.run").tag("queue", queue).timers();
					assertThat(runTimers.stream().mapToLong(Timer::count).sum()).isEqualTo(4);
					assertThat(runTimers).allSatisfy((timer) -> {
						assertThat(timer.getId().getTag("handler")).isEqualTo(handler);
						assertThat(timer.getId().getTag("outcome")).isIn("success", "failure");
					});
					assertThat(runCount(meters, queue, "success")).isEqualTo(2);
					assertThat(runCount(meters, queue, "failure")).isEqualTo(2);
					assertThat(timerNames(meters, queue)).containsExactlyInAnyOrder("delayed.tasks.run",
							"delayed.tasks.lateness", "delayed.tasks.end.to.end", "delayed.tasks.schedule");
					assertThat(meters.getMeters()).map((meter) -> meter.getId().getName())
						.allSatisfy((name) -> assertThat(name).doesNotContain("run.time").doesNotContain("duration"));
				});
			});
	}

	@Test
	void runTimeTimerComesFromTheRunObservationOnceWithSpringBootsObservationAutoConfiguration() {
		String queue = "m-boot-observation";
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class, DelayedTasksSnapshotsAutoConfiguration.class,
					ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
					SimpleMetricsExportAutoConfiguration.class, DelayedTasksMetricsAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + this.redis.url(),
					"delayed-tasks.key-prefix=" + this.redis.keyPrefix(), "delayed-tasks.worker.lease-duration=2s",
					"delayed-tasks.worker.reap-grace=500ms", "delayed-tasks.worker.timer-ttl=1s",
					"delayed-tasks.retry.delay=100ms", "delayed-tasks.retry.jitter=0ms", "test.queue=" + queue)
			.withUserConfiguration(MetricsHandler.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(ObservationRegistry.class).hasSingleBean(MeterRegistry.class);
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				scheduler.enqueue(queue, new Command("succeed"));
				scheduler.enqueue(queue, new Command("fail-once"));
				await().atMost(WAIT).ignoreExceptionsInstanceOf(MeterNotFoundException.class).untilAsserted(() -> {
					Collection<Timer> runTimers = meters.find("delayed.tasks.run").tag("queue", queue).timers();
					assertThat(runTimers).isNotEmpty()
						.allSatisfy(
								(timer) -> assertThat(timer.getId().getTag("handler")).isEqualTo(queue + "-handler"));
					assertThat(runTimers.stream().mapToLong(Timer::count).sum()).isEqualTo(3);
					assertThat(meters.get("delayed.tasks.started").tag("queue", queue).counter().count()).isEqualTo(3);
					assertThat(count(meters, "delayed.tasks.succeeded", queue)).isEqualTo(2);
					assertThat(timerNames(meters, queue)).containsExactlyInAnyOrder("delayed.tasks.run",
							"delayed.tasks.lateness", "delayed.tasks.end.to.end", "delayed.tasks.schedule");
				});
			});
	}

	@Test
	void latenessDistributionIsConfiguredWithTheUsualMicrometerProperties() {
		String queue = "m-distribution";
		this.runner
			.withPropertyValues("test.queue=" + queue,
					"management.metrics.distribution.percentiles-histogram.delayed.tasks.lateness=true",
					"management.metrics.distribution.percentiles.delayed.tasks.lateness=0.5,0.99",
					"management.metrics.distribution.slo.delayed.tasks.lateness=50ms,1s")
			.withUserConfiguration(MetricsHandler.class)
			.run((context) -> {
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				context.getBean(DelayedTaskScheduler.class).enqueue(queue, new Command("succeed"));
				await().atMost(WAIT).until(() -> count(meters, "delayed.tasks.succeeded", queue) == 1);
				HistogramSnapshot lateness = meters.get("delayed.tasks.lateness")
					.tags("queue", queue)
					.timer()
					.takeSnapshot();
				assertThat(lateness.percentileValues()).extracting(ValueAtPercentile::percentile)
					.containsExactly(0.5, 0.99);
				assertThat(lateness.histogramCounts()).extracting(CountAtBucket::bucket)
					.contains((double) TimeUnit.MILLISECONDS.toNanos(50), (double) TimeUnit.SECONDS.toNanos(1));
				HistogramSnapshot endToEnd = meters.get("delayed.tasks.end.to.end")
					.tags("queue", queue)
					.timer()
					.takeSnapshot();
				assertThat(endToEnd.percentileValues()).isEmpty();
				assertThat(endToEnd.histogramCounts()).isEmpty();
			});
	}

	@Test
	void staleAcknowledgementOfATaskAnotherWorkerTookOverIsCountedAndTheReapIsCountedFromRedis() {
		String queue = "m-stale";
		this.runner.withPropertyValues("test.queue=" + queue)
			.withUserConfiguration(StaleHandler.class, HeartbeatThatNeverReachesRedis.class)
			.run((context) -> {
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				StaleHandler handler = context.getBean(StaleHandler.class);
				TaskId id = context.getBean(DelayedTaskScheduler.class).enqueue(queue, new Command("succeed"));
				// The first run outlives its lease (its heartbeat never reaches Redis),
				// the task is reaped and runs again beside it; the first run's
				// acknowledgement is then stale.
				await().atMost(WAIT).until(() -> count(meters, "delayed.tasks.stale", queue) == 1);
				await().atMost(WAIT).until(() -> count(meters, "delayed.tasks.succeeded", queue) == 1);
				assertThat(handler.deliveries).containsExactly(1, 2);
				Tags handlerTags = Tags.of("queue", queue, "handler", queue + "-handler");
				Counter stale = meters.get("delayed.tasks.stale").tags(handlerTags).counter();
				assertThat(stale.getId().getTags()).containsExactlyInAnyOrderElementsOf(handlerTags);
				assertThat(stale.count()).isEqualTo(1);
				assertThat(meters.get("delayed.tasks.started").tags(handlerTags).counter().count()).isEqualTo(2);
				assertThat(context.getBean(DelayedTaskScheduler.class).find(queue, id)).isEmpty();
				QueueSnapshots snapshots = context.getBean(QueueSnapshots.class);
				snapshots.refresh();
				FunctionCounter reaped = meters.get("delayed.tasks.reaped").tags("queue", queue).functionCounter();
				assertThat(reaped.count()).isEqualTo(1);
				assertThat(reaped.count()).isEqualTo(snapshots.current().get(queue).counter("reaped"));
			});
	}

	@Test
	void queueGaugesReadTheBackgroundSnapshotNotRedis() {
		String handled = "m-gauges";
		String idle = "m-gauges-idle";
		this.runner.withPropertyValues("test.queue=" + handled, "delayed-tasks.snapshot-interval=1h")
			.withUserConfiguration(MetricsHandler.class)
			.run((context) -> {
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				MetricsHandler handler = context.getBean(MetricsHandler.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				QueueSnapshots snapshots = context.getBean(QueueSnapshots.class);
				try {
					for (int i = 0; i < 3; i++) {
						scheduler.enqueue(idle, "ready " + i);
					}
					scheduler.schedule(idle, "later", Duration.ofHours(1));
					scheduler.schedule(idle, "later", Duration.ofHours(2));
					scheduler.enqueue(handled, new Command("block"));
					scheduler.enqueue(handled, new Command("non-retryable"));
					assertThat(handler.blocking.await(10, TimeUnit.SECONDS)).isTrue();
					DeadLetters deadLetters = context.getBean(DeadLetters.class);
					await().atMost(WAIT).until(() -> deadLetters.count(handled) == 1);
					Thread.sleep(300);
					snapshots.refresh();
					Map<String, QueueStats> snapshot = snapshots.current();
					assertThat(sizes(meters, idle)).containsExactlyInAnyOrderEntriesOf(
							Map.of("scheduled", 2.0, "ready", 3.0, "active", 0.0, "dead", 0.0));
					assertThat(sizes(meters, handled)).containsExactlyInAnyOrderEntriesOf(
							Map.of("scheduled", 0.0, "ready", 0.0, "active", 1.0, "dead", 1.0));
					TimeGauge oldest = meters.get("delayed.tasks.oldest.ready.age").tags("queue", idle).timeGauge();
					assertThat(oldest.value(TimeUnit.MILLISECONDS))
						.isEqualTo(snapshot.get(idle).oldestReadyAge().toMillis())
						.isGreaterThanOrEqualTo(300);
					assertThat(meters.get("delayed.tasks.oldest.ready.age").tags("queue", handled).timeGauge().value())
						.isZero();
					// Redis changes; a scrape does not see it until the next refresh.
					scheduler.enqueue(idle, "ready 3");
					scheduler.enqueue(idle, "ready 4");
					Thread.sleep(50);
					assertThat(sizes(meters, idle)).containsEntry("ready", 3.0);
					assertThat(oldest.value(TimeUnit.MILLISECONDS))
						.isEqualTo(snapshot.get(idle).oldestReadyAge().toMillis());
					assertThat(snapshots.current()).isSameAs(snapshot);
					snapshots.refresh();
					assertThat(sizes(meters, idle)).containsEntry("ready", 5.0);
					assertThat(sizes(meters, idle).get("ready")).isEqualTo(snapshots.current().get(idle).ready());
				}
				finally {
					handler.release.countDown();
				}
			});
	}

	@Test
	void thousandsOfQueueNamesMakeABoundedNumberOfSeriesAndARemovedQueueLosesItsGauges() {
		String handled = "m-bounded";
		// An index of its own: the other tests' queues are not in it.
		this.runner
			.withPropertyValues("delayed-tasks.key-prefix=" + this.redis.keyPrefix() + ":own", "test.queue=" + handled,
					"delayed-tasks.monitoring.max-queues=20", "delayed-tasks.queues.zz-declared.concurrency=1")
			.withUserConfiguration(MetricsHandler.class)
			.run((context) -> {
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
				QueueSnapshots snapshots = context.getBean(QueueSnapshots.class);
				// The attack: a queue name per user, as request data picks them.
				int names = 1500;
				String removed = "m-user-0000";
				TaskId removedTask = scheduler.schedule(removed, "job", Duration.ofHours(1));
				for (int i = 1; i < names; i++) {
					scheduler.schedule(String.format("m-user-%04d", i), "job", Duration.ofHours(1));
				}
				scheduler.schedule("zz-declared", "job", Duration.ofHours(1));
				snapshots.refresh();
				Set<String> sizeQueues = queueTags(meters.find("delayed.tasks.size").meters());
				// Before, every name had 4 size gauges (6,000 series here): now the
				// handled queue, the declared one and 18 others by name.
				assertThat(sizeQueues).hasSize(20).contains(handled, "zz-declared", "m-user-0000", "m-user-0017");
				assertThat(meters.find("delayed.tasks.size").meters()).hasSize(4 * 20);
				assertThat(queueTags(meters.find("delayed.tasks.oldest.ready.age").meters())).isEqualTo(sizeQueues);
				assertThat(queueTags(meters.find("delayed.tasks.reaped").meters())).isEqualTo(sizeQueues);
				assertThat(meters.get("delayed.tasks.queues.known").gauge().value()).isEqualTo(names + 2);
				assertThat(meters.get("delayed.tasks.queues.unreported").gauge().value()).isEqualTo(names + 2 - 20);
				// Counters of this instance's own scheduling are bounded too.
				Set<String> scheduledQueues = queueTags(meters.find("delayed.tasks.scheduled").meters());
				assertThat(scheduledQueues).hasSizeLessThanOrEqualTo(20 + 20 + 1)
					.contains(BoundedQueueTags.OTHER_QUEUES);
				assertThat(meters.get("delayed.tasks.scheduled")
					.tags("queue", BoundedQueueTags.OTHER_QUEUES, "outcome", "created")
					.counter()
					.count()).isGreaterThanOrEqualTo(names - 40);
				// So are the timers of the schedule observation, through the meter
				// filter.
				assertThat(queueTags(meters.find("delayed.tasks.schedule").meters()))
					.hasSizeLessThanOrEqualTo(20 + 20 + 1)
					.contains(BoundedQueueTags.OTHER_QUEUES);

				// A queue that leaves the report loses its gauges; the next by name
				// takes its place.
				assertThat(scheduler.cancel(removed, removedTask)).isTrue();
				assertThat(context.getBean(QueueControl.class).remove(removed).removed()).isTrue();
				snapshots.refresh();
				for (String name : List.of("delayed.tasks.size", "delayed.tasks.oldest.ready.age",
						"delayed.tasks.reaped", "delayed.tasks.corrupt")) {
					assertThat(meters.find(name).tag("queue", removed).meters()).as(name).isEmpty();
				}
				assertThat(queueTags(meters.find("delayed.tasks.size").meters())).hasSize(20)
					.contains("m-user-0018")
					.doesNotContain(removed);
				assertThat(meters.get("delayed.tasks.queues.known").gauge().value()).isEqualTo(names + 1);
			});
	}

	private static Set<String> queueTags(Collection<Meter> found) {
		return found.stream().map((meter) -> meter.getId().getTag("queue")).collect(Collectors.toSet());
	}

	@Test
	void queueGaugesKeepTheirLastValuesWhenRedisIsGone() throws Exception {
		String queue = "m-redis-gone";
		RedisServer server = RedisServers.fromEnvironment().startPrivate(RedisKind.ANY, List.of());
		try (server) {
			// A Redis call would wait out the 3 s command timeout for a server that is
			// gone.
			runner(server.url(), this.redis.keyPrefix()).withPropertyValues("spring.data.redis.timeout=3s")
				.run((context) -> {
					MeterRegistry meters = context.getBean(MeterRegistry.class);
					DelayedTaskScheduler scheduler = context.getBean(DelayedTaskScheduler.class);
					scheduler.enqueue(queue, "a");
					scheduler.enqueue(queue, "b");
					scheduler.schedule(queue, "c", Duration.ofHours(1));
					await().atMost(WAIT)
						.until(() -> meters.find("delayed.tasks.size").tags("queue", queue, "state", "ready").gauge(),
								(gauge) -> gauge != null && gauge.value() == 2.0);
					QueueSnapshots snapshots = context.getBean(QueueSnapshots.class);
					server.close();
					Instant gone = Instant.now();
					// Refreshes fail now; the gauges answer from the last snapshot at
					// once.
					Thread.sleep(1000);
					long started = System.nanoTime();
					Map<String, Double> sizes = sizes(meters, queue);
					double age = meters.get("delayed.tasks.oldest.ready.age").tags("queue", queue).timeGauge().value();
					long tookMillis = (System.nanoTime() - started) / 1_000_000;
					assertThat(sizes).containsExactlyInAnyOrderEntriesOf(
							Map.of("scheduled", 1.0, "ready", 2.0, "active", 0.0, "dead", 0.0));
					assertThat(age).isEqualTo(snapshots.current().get(queue).oldestReadyAge().toMillis() / 1000.0);
					assertThat(tookMillis).isLessThan(1000);
					// No refresh has succeeded since Redis went away: the gauges answered
					// from the last snapshot taken before.
					assertThat(snapshots.refreshedAt()).isNotNull().isBeforeOrEqualTo(gone);
				});
		}
	}

	private static double count(MeterRegistry meters, String name, String queue) {
		return meters.find(name).tag("queue", queue).counters().stream().mapToDouble(Counter::count).sum();
	}

	private static long runCount(MeterRegistry meters, String queue, String outcome) {
		return meters.find("delayed.tasks.run")
			.tags("queue", queue, "outcome", outcome)
			.timers()
			.stream()
			.mapToLong(Timer::count)
			.sum();
	}

	private static Map<String, Double> sizes(MeterRegistry meters, String queue) {
		return meters.find("delayed.tasks.size")
			.tag("queue", queue)
			.gauges()
			.stream()
			.collect(Collectors.toMap((gauge) -> gauge.getId().getTag("state"), Gauge::value));
	}

	private static Set<String> timerNames(MeterRegistry meters, String queue) {
		return Search.in(meters)
			.tag("queue", queue)
			.meters()
			.stream()
			.filter((meter) -> meter instanceof Timer)
			.map(Meter::getId)
			.map(Meter.Id::getName)
			.collect(Collectors.toSet());
	}

	record Command(String action) {

	}

	/**
	 * A meter registry, and an observation registry whose meter handler writes to it, as
	 * an application with Micrometer has.
	 */
	@Configuration(proxyBeanMethods = false)
	static class Meters {

		@Bean
		SimpleMeterRegistry simpleMeterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		ObservationRegistry observationRegistry(MeterRegistry meters) {
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
			return registry;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class MetricsHandler {

		final CountDownLatch blocking = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		@DelayedTaskHandler(queue = "${test.queue}", id = "${test.queue}-handler", concurrency = "2")
		void handle(Command command, TaskContext context) throws InterruptedException {
			switch (command.action()) {
				case "succeed" -> {
				}
				case "fail-once" -> {
					if (context.attempt() < 2) {
						throw new IllegalStateException("failing once");
					}
				}
				case "non-retryable" -> throw new NonRetryableTaskException("never works");
				case "block" -> {
					this.blocking.countDown();
					this.release.await(30, TimeUnit.SECONDS);
				}
				default -> throw new IllegalArgumentException(command.action());
			}
		}

	}

	/**
	 * The first delivery outlives its lease and returns once the second delivery has
	 * started; the second returns once the first one's acknowledgement was refused.
	 */
	@Configuration(proxyBeanMethods = false)
	static class StaleHandler implements DelayedTaskListener {

		final List<Integer> deliveries = new CopyOnWriteArrayList<>();

		final CountDownLatch secondStarted = new CountDownLatch(1);

		final CountDownLatch staleSeen = new CountDownLatch(1);

		@DelayedTaskHandler(queue = "${test.queue}", id = "${test.queue}-handler", concurrency = "2")
		void handle(Command command, TaskContext context) throws InterruptedException {
			this.deliveries.add(context.deliveryCount());
			if (context.deliveryCount() == 1) {
				this.secondStarted.await(10, TimeUnit.SECONDS);
			}
			else {
				this.secondStarted.countDown();
				this.staleSeen.await(1500, TimeUnit.MILLISECONDS);
			}
		}

		@Override
		public void staleAcknowledgement(TaskContext context) {
			this.staleSeen.countDown();
		}

	}

	/**
	 * A task store whose lease extensions never reach Redis, as when a worker stalls: its
	 * leases run out while it believes them extended.
	 */
	@Configuration(proxyBeanMethods = false)
	static class HeartbeatThatNeverReachesRedis {

		@Bean
		TaskStore lostHeartbeatTaskStore(StoreScripts scripts, StoreSettings settings) {
			RedisTaskStore store = new RedisTaskStore(scripts, settings);
			return new TaskStore() {

				@Override
				public ClaimBatch claim(String queue, int max, String nonce) {
					return store.claim(queue, max, nonce);
				}

				@Override
				public boolean configureLimits(String queue, QueueLimits configured) {
					return store.configureLimits(queue, configured);
				}

				@Override
				public TimerTick promote(String queue, String ownerId, Duration timerTtl, boolean tickConsumed,
						TaskHandoff.@Nullable HandoffLease handoff) {
					return store.promote(queue, ownerId, timerTtl, tickConsumed, handoff);
				}

				@Override
				public void resignTimer(String queue, String ownerId) {
					store.resignTimer(queue, ownerId);
				}

				@Override
				public List<AckOutcome> ack(String queue, List<Lease> leases, List<String> results) {
					return store.ack(queue, leases, results);
				}

				@Override
				public FailOutcome fail(String queue, Lease lease, TaskFailure failure) {
					return store.fail(queue, lease, failure);
				}

				@Override
				public List<ExtendOutcome> extend(String queue, List<Lease> leases) {
					return leases.stream().map((lease) -> ExtendOutcome.EXTENDED).toList();
				}

				@Override
				public List<ReleaseOutcome> release(String queue, List<Lease> leases, Duration hold,
						RateLimitedException.Scope scope) {
					return store.release(queue, leases, hold);
				}

				@Override
				public int recover(String queue, List<String> claimNonces) {
					return store.recover(queue, claimNonces);
				}

			};
		}

	}

}

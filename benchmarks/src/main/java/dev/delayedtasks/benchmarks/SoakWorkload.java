package dev.delayedtasks.benchmarks;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.benchmarks.SoakPlan.Cancel;
import dev.delayedtasks.benchmarks.SoakPlan.PlannedTask;
import dev.delayedtasks.internal.store.QueueCounter;
import dev.delayedtasks.internal.store.QueueStats;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * {@code soak}: mixed load (delays, failures, retries, dead letters, cancels) for minutes
 * on worker processes of their own, while workers are killed with SIGKILL and Redis is
 * stopped once; then every task must have reached exactly one terminal state. Manual:
 * never part of {@code all}. This process only schedules and cancels (it has no handler
 * for the soak queue); the {@link SoakWorkers} run the tasks.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(7)
class SoakWorkload implements Workload {

	private static final Log logger = LogFactory.getLog(SoakWorkload.class);

	private static final Duration PROGRESS_EVERY = Duration.ofSeconds(10);

	/** Longest wait for the queue to drain once scheduling stopped. */
	private static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(3);

	private final DelayedTaskScheduler scheduler;

	private final DeadLetters deadLetters;

	private final SoakLedger ledger;

	private final RedisProbe redis;

	private final RedisOutage outage;

	private final BenchmarkProperties properties;

	private final Environment environment;

	private final PrintStream out = System.out;

	SoakWorkload(DelayedTaskScheduler scheduler, DeadLetters deadLetters, SoakLedger ledger, RedisProbe redis,
			RedisOutage outage, BenchmarkProperties properties, Environment environment) {
		this.scheduler = scheduler;
		this.deadLetters = deadLetters;
		this.ledger = ledger;
		this.redis = redis;
		this.outage = outage;
		this.properties = properties;
		this.environment = environment;
	}

	@Override
	public String name() {
		return "soak";
	}

	@Override
	public boolean manual() {
		return true;
	}

	@Override
	public List<WorkloadResult> run() {
		BenchmarkProperties.Soak settings = this.properties.soak();
		String concurrency = this.environment.getRequiredProperty("bench.soak.concurrency");
		SoakPlan plan = new SoakPlan();
		long startNanos = System.nanoTime();
		SoakChaos chaos;
		boolean drained;
		try (SoakWorkers workers = new SoakWorkers(this.environment.getRequiredProperty("spring.data.redis.url"),
				this.redis.keyPrefix(), concurrency,
				BuildDirectory.target().resolve("soak").resolve(this.redis.keyPrefix() + "-").toString())) {
			for (int i = 0; i < settings.workers(); i++) {
				workers.startOne();
			}
			SoakProducer producer = new SoakProducer(this.scheduler, plan, settings, this.properties.seed());
			chaos = new SoakChaos(workers, this.ledger, this.outage, settings, this.properties.seed() + 1, this.out);
			producer.start();
			chaos.start();
			try {
				long end = startNanos + settings.duration().toNanos();
				while (System.nanoTime() < end) {
					Pause.millis(Math.min(PROGRESS_EVERY.toMillis(),
							TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()) + 1));
					progress("running", startNanos, plan, workers, chaos);
				}
			}
			finally {
				chaos.stop();
				producer.stop();
			}
			drained = awaitDrained(startNanos, plan, workers, chaos);
		}
		long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNanos);
		// Read once the workers are gone, so that no late run changes the counts.
		SoakLedger.Snapshot runs = this.ledger.snapshot();
		Map<String, String> deadReasons = deadLetters();
		SoakVerdict verdict = SoakVerdict.judge(plan.tasks(), runs, deadReasons.keySet(),
				drained ? Set.of() : pending(plan));
		verdict.examples().forEach((example) -> logger.warn("Soak violation: " + example));
		QueueStats stats = this.redis.stats(Queues.SOAK);
		this.redis.deleteQueue(Queues.SOAK);
		Map<String, Object> fields = WorkloadResult.fields("duration_s", settings.duration().toSeconds(), "total_s",
				seconds, "rate_per_s", settings.rate(), "workers", settings.workers(), "concurrency", concurrency,
				"kills", chaos.kills().size(), "schedule_errors",
				plan.tasks().stream().filter((task) -> !task.stored()).count(), "cancel_refused",
				count(plan, Cancel.REFUSED), "cancel_errors", count(plan, Cancel.FAILED), "reaped",
				stats.counter(QueueCounter.REAPED), "stale_acks", stats.counter(QueueCounter.STALE_COMPLETIONS),
				"dead_reasons", reasons(deadReasons));
		fields.putAll(SoakRecovery.of(chaos.kills(), chaos.outage(), runs).fields());
		fields.putAll(verdict.fields());
		return List.of(WorkloadResult.of(name(), fields, null));
	}

	private boolean awaitDrained(long startNanos, SoakPlan plan, SoakWorkers workers, SoakChaos chaos) {
		long deadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
		long nextProgress = System.nanoTime() + PROGRESS_EVERY.toNanos();
		while (System.nanoTime() < deadline) {
			QueueStats stats = this.redis.stats(Queues.SOAK);
			if (stats.scheduled() == 0 && stats.ready() == 0 && stats.active() == 0) {
				progress("drained", startNanos, plan, workers, chaos);
				return true;
			}
			if (System.nanoTime() > nextProgress) {
				progress("draining", startNanos, plan, workers, chaos);
				nextProgress += PROGRESS_EVERY.toNanos();
			}
			Pause.millis(200);
		}
		logger.warn("Soak: the queue did not drain within " + DRAIN_TIMEOUT);
		return false;
	}

	private void progress(String phase, long startNanos, SoakPlan plan, SoakWorkers workers, SoakChaos chaos) {
		String counts;
		try {
			Map<String, Long> totals = this.ledger.totals();
			QueueStats stats = this.redis.stats(Queues.SOAK);
			counts = " runs=" + totals.getOrDefault("runs", 0L) + " succeeded=" + totals.getOrDefault("succeeded", 0L)
					+ " failed=" + totals.getOrDefault("failed", 0L) + " queue_scheduled=" + stats.scheduled()
					+ " queue_ready=" + stats.ready() + " queue_active=" + stats.active() + " queue_dead="
					+ stats.dead() + " reaped=" + stats.counter(QueueCounter.REAPED);
		}
		catch (RuntimeException ex) {
			counts = " redis=unreachable";
		}
		// Timed after the reads, which wait while Redis is stopped.
		this.out.println("soak phase=" + phase + " elapsed_s="
				+ TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNanos) + " scheduled=" + plan.size()
				+ " kills=" + chaos.kills().size() + " workers_alive=" + workers.alive() + counts);
	}

	/**
	 * Ids still queued after the drain timed out, checked one by one: the ready list also
	 * holds hints of cancelled tasks.
	 * @param plan the soak plan
	 * @return the ids of planned tasks that are still queued
	 */
	private Set<String> pending(SoakPlan plan) {
		Set<String> planned = plan.tasks().stream().map(PlannedTask::id).collect(Collectors.toSet());
		return this.redis.queuedIds(Queues.SOAK)
			.stream()
			.filter(planned::contains)
			.filter((id) -> this.scheduler.find(Queues.SOAK, TaskId.of(id))
				.filter((info) -> info.state() != TaskState.DEAD)
				.isPresent())
			.collect(Collectors.toSet());
	}

	/**
	 * Dead letters of the soak queue: id to reason.
	 * @return the reason of each dead letter, by id
	 */
	private Map<String, String> deadLetters() {
		int count = (int) this.deadLetters.count(Queues.SOAK);
		return this.deadLetters.list(Queues.SOAK, count)
			.stream()
			.collect(Collectors.toMap((letter) -> letter.id().value(), DeadLetter::reason, (a, b) -> a));
	}

	private static String reasons(Map<String, String> deadReasons) {
		Map<String, Long> counts = new TreeMap<>(deadReasons.values()
			.stream()
			.collect(Collectors.groupingBy((reason) -> reason, Collectors.counting())));
		return counts.isEmpty() ? "none"
				: counts.entrySet()
					.stream()
					.map((entry) -> entry.getKey() + ":" + entry.getValue())
					.collect(Collectors.joining(","));
	}

	private static long count(SoakPlan plan, Cancel cancel) {
		return plan.tasks().stream().filter((task) -> task.cancel() == cancel).count();
	}

}

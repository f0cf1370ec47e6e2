package dev.delayedtasks.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.actuate.BoundedQueueTags;
import dev.delayedtasks.internal.actuate.QueueSnapshots;
import dev.delayedtasks.internal.actuate.ReportedQueues;
import dev.delayedtasks.internal.store.QueueCounter;
import dev.delayedtasks.internal.store.QueueStats;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters of delayed tasks. Counters and timers come from the
 * {@link DelayedTaskListener} callbacks of this instance; gauges of queue sizes and
 * counters kept in Redis (reaped leases) come from the background {@link QueueSnapshots},
 * so a scrape never calls Redis. Run time is the {@code delayed.tasks.run} observation's
 * timer, not a meter of its own.
 * <p>
 * Gauges and Redis-side counters describe a queue shared by every instance: aggregate
 * them with {@code max by (queue, state)}, not {@code sum}. They exist for the queues the
 * snapshot reports ({@link ReportedQueues}), and are removed from the registry when a
 * queue leaves the report (removed, or crowded out); two gauges count the known queues
 * and those left out. Counters and timers of this instance's work keep the queue's name
 * as their {@code queue} tag for the reported queues and for the first {@code max-queues}
 * others they meet; the rest count under {@value BoundedQueueTags#OTHER_QUEUES}
 * ({@link BoundedQueueTags}, also a meter filter for the observations' timers), so that
 * queue names made from request data cannot make the registry grow without bound.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class DelayedTaskMetrics implements DelayedTaskListener, MeterBinder {

	private static final String PREFIX = "delayed.tasks.";

	private final QueueSnapshots snapshots;

	private final Function<String, String> handlerOfQueue;

	private final Map<String, List<Meter>> gaugesByQueue = new ConcurrentHashMap<>();

	private final BoundedQueueTags queueTags;

	private volatile @Nullable MeterRegistry registry;

	/**
	 * Create the metrics.
	 * @param snapshots the queue snapshots
	 * @param handlerOfQueue this instance's handler id of a queue, for the
	 * {@code handler} tag
	 */
	public DelayedTaskMetrics(QueueSnapshots snapshots, Function<String, String> handlerOfQueue) {
		this(snapshots, handlerOfQueue, new BoundedQueueTags(snapshots.maxQueues()));
	}

	/**
	 * Create the metrics.
	 * @param snapshots the queue snapshots
	 * @param handlerOfQueue this instance's handler id of a queue, for the
	 * {@code handler} tag
	 * @param queueTags bounds the {@code queue} tag, told here which queues are reported
	 */
	public DelayedTaskMetrics(QueueSnapshots snapshots, Function<String, String> handlerOfQueue,
			BoundedQueueTags queueTags) {
		this.snapshots = snapshots;
		this.handlerOfQueue = handlerOfQueue;
		this.queueTags = queueTags;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.registry = registry;
		Gauge.builder(PREFIX + "queues.known", this.snapshots, (snapshots) -> snapshots.selection().known())
			.description("Queues in the index of known queues or handled by this instance")
			.register(registry);
		Gauge.builder(PREFIX + "queues.unreported", this.snapshots, (snapshots) -> snapshots.selection().omitted())
			.description("Known queues left out of the per-queue gauges, health details and endpoint list "
					+ "(delayed-tasks.monitoring.max-queues)")
			.register(registry);
		this.snapshots.onRefresh(this::updateQueueGauges);
	}

	private synchronized void updateQueueGauges(Map<String, QueueStats> snapshot) {
		this.queueTags.reported(snapshot.keySet());
		MeterRegistry meters = this.registry;
		if (meters == null) {
			return;
		}
		for (String queue : new HashSet<>(this.gaugesByQueue.keySet())) {
			if (!snapshot.containsKey(queue)) {
				this.gaugesByQueue.remove(queue).forEach(meters::remove);
			}
		}
		for (String queue : snapshot.keySet()) {
			if (!this.gaugesByQueue.containsKey(queue)) {
				this.gaugesByQueue.put(queue, registerQueueGauges(meters, queue));
			}
		}
	}

	private List<Meter> registerQueueGauges(MeterRegistry meters, String queue) {
		List<Meter> registered = new ArrayList<>();
		registered.add(gauge(meters, queue, "scheduled", QueueStats::scheduled));
		registered.add(gauge(meters, queue, "ready", QueueStats::ready));
		registered.add(gauge(meters, queue, "active", QueueStats::active));
		registered.add(gauge(meters, queue, "dead", QueueStats::dead));
		registered.add(TimeGauge
			.builder(PREFIX + "oldest.ready.age", this.snapshots, TimeUnit.MILLISECONDS,
					(snapshots) -> value(snapshots, queue, (stats) -> stats.oldestReadyAge().toMillis()))
			.description("How long the oldest ready task of the queue has waited since its due time")
			.tag("queue", queue)
			.register(meters));
		registered.add(FunctionCounter
			.builder(PREFIX + "reaped", this.snapshots,
					(snapshots) -> value(snapshots, queue, (stats) -> stats.counter(QueueCounter.REAPED)))
			.description("Tasks whose lease expired (a crashed or stalled worker) and were taken back")
			.tag("queue", queue)
			.register(meters));
		registered.add(FunctionCounter
			.builder(PREFIX + "corrupt", this.snapshots,
					(snapshots) -> value(snapshots, queue, (stats) -> stats.counter(QueueCounter.CORRUPT)))
			.description("Tasks dead-lettered because their data in Redis could not be read")
			.tag("queue", queue)
			.register(meters));
		return registered;
	}

	private Meter gauge(MeterRegistry meters, String queue, String state, ToDoubleFunction<QueueStats> count) {
		return Gauge.builder(PREFIX + "size", this.snapshots, (snapshots) -> value(snapshots, queue, count))
			.description("Tasks of the queue in the state, shared by all instances (aggregate with max)")
			.tags("queue", queue, "state", state)
			.register(meters);
	}

	private static double value(QueueSnapshots snapshots, String queue, ToDoubleFunction<QueueStats> read) {
		QueueStats stats = snapshots.current().get(queue);
		return (stats != null) ? read.applyAsDouble(stats) : Double.NaN;
	}

	@Override
	public void scheduled(String queue, ScheduleResult result) {
		count("scheduled", "Tasks scheduled, by outcome (created, existing, duplicate)",
				Tags.of("queue", queueTag(queue), "outcome", result.outcome().name().toLowerCase()));
	}

	@Override
	public void afterCommitFailed(String queue, TaskId id, Throwable failure) {
		count("after.commit.failed",
				"Tasks whose send, deferred until their transaction committed, failed after the commit: lost unless "
						+ "scheduled again",
				Tags.of("queue", queue));
	}

	@Override
	public void storeAbandoned(String queue, TaskId id, TaskStoreException failure) {
		count("producer.abandoned",
				"Tasks an asynchronous call gave up before Redis confirmed them (outage buffer wait over, or the "
						+ "application stopped): the caller's future failed; the task may or may not be stored",
				Tags.of("queue", queueTag(queue)));
	}

	@Override
	public void cancelled(String queue, TaskId id) {
		count("cancelled", "Scheduled or ready tasks cancelled", Tags.of("queue", queueTag(queue)));
	}

	@Override
	public void expired(String queue, TaskId id, Instant expiresAt) {
		count("expired", "Tasks that had not started by their expiry and will never run",
				Tags.of("queue", queueTag(queue)));
	}

	@Override
	public void started(TaskContext context) {
		Tags tags = handlerTags(context);
		count("started", "Handler runs started", tags);
		time("lateness", "Time from a task's due time to its start (Redis time)",
				Tags.of("queue", queueTag(context.queue())), Duration.between(context.dueAt(), context.startedAt()));
	}

	@Override
	public void succeeded(TaskContext context, Duration runTime) {
		count("succeeded", "Handler runs that completed their task", handlerTags(context));
		Duration endToEnd = Duration.between(context.createdAt(), context.startedAt()).plus(runTime);
		time("end.to.end", "Time from scheduling a task to its completion", Tags.of("queue", queueTag(context.queue())),
				endToEnd);
	}

	@Override
	public void retried(TaskContext context, Throwable failure, Instant nextRunAt) {
		count("retried", "Failed runs that will be retried", handlerTags(context));
	}

	@Override
	public void rateLimited(TaskContext context, Duration retryAfter) {
		count("rate.limited", "Runs whose handler said the queue must slow down (RateLimitedException)",
				handlerTags(context));
	}

	@Override
	public void throttled(String queue, Duration waited) {
		time("throttled", "Time this instance's dispatcher waited for the queue's flow control while tasks were ready",
				Tags.of("queue", queueTag(queue), "handler", this.handlerOfQueue.apply(queue)), waited);
	}

	@Override
	public void deadLettered(TaskContext context, Throwable failure, String reason) {
		count("dead.lettered", "Tasks moved to the dead letters, by reason",
				handlerTags(context).and("reason", reason));
	}

	@Override
	public void staleAcknowledgement(TaskContext context) {
		count("stale", "Completions rejected because another worker owned the task: duplicate executions",
				handlerTags(context));
	}

	private Tags handlerTags(TaskContext context) {
		return Tags.of("queue", queueTag(context.queue()), "handler", this.handlerOfQueue.apply(context.queue()));
	}

	private String queueTag(String queue) {
		return this.queueTags.tag(queue);
	}

	private void count(String name, String description, Tags tags) {
		MeterRegistry meters = this.registry;
		if (meters != null) {
			Counter.builder(PREFIX + name).description(description).tags(tags).register(meters).increment();
		}
	}

	private void time(String name, String description, Tags tags, Duration duration) {
		MeterRegistry meters = this.registry;
		if (meters != null) {
			Timer.builder(PREFIX + name)
				.description(description)
				.tags(tags)
				.register(meters)
				.record(duration.isNegative() ? Duration.ZERO : duration);
		}
	}

}

package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.autoconfigure.DelayedTasksProperties;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code rate-limited}: one queue with a {@code rate-limit} (1000/1s unless
 * {@code bench.rate-limited.rate-limit} says otherwise), handlers of concurrency 16 in
 * this JVM, in two rounds. First a backlog scheduled at once ({@code scheduleAll}): the
 * starts a second after the first burst against the limit, the most leases in any span of
 * the limit's window (Redis time of each lease), and the slot lateness: for the
 * {@code i}-th lease ({@code i >= count}), how long after the window of lease
 * {@code i - count} ended it came, which says how promptly freed room is used. Then tasks
 * due at half the limit's rate, scheduled one by one as the {@code delayed} workload
 * schedules them: their lateness, to compare with that workload's.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(11)
class RateLimitedWorkload implements Workload {

	private static final int BATCH = 1000;

	private static final Duration LIMITS_WRITTEN = Duration.ofSeconds(10);

	private final Rounds rounds;

	private final TaskProducer producer;

	private final RedisProbe redis;

	private final QueueControl queues;

	private final QueueLimits configured;

	private final RateLimit limit;

	private final BenchmarkProperties.RateLimited settings;

	RateLimitedWorkload(Rounds rounds, TaskProducer producer, RedisProbe redis, QueueControl queues,
			DelayedTasksProperties library, BenchmarkProperties properties) {
		this.rounds = rounds;
		this.producer = producer;
		this.redis = redis;
		this.queues = queues;
		this.configured = library.limits(Queues.RATE_LIMITED);
		RateLimit rateLimit = this.configured.rateLimit();
		if (rateLimit == null) {
			throw new IllegalStateException("Queue '" + Queues.RATE_LIMITED
					+ "' has no rate limit: set bench.rate-limited.rate-limit, for example 1000/1s");
		}
		this.limit = rateLimit;
		this.settings = properties.rateLimited();
	}

	@Override
	public String name() {
		return "rate-limited";
	}

	@Override
	public List<WorkloadResult> run() {
		String queue = Queues.RATE_LIMITED;
		int count = this.limit.count();
		long windowMs = this.limit.window().toMillis();
		int n = this.settings.tasks();
		Duration drain = this.limit.window().multipliedBy((n + count - 1) / count).plusMinutes(1);
		Round backlog = this.rounds.measure(queue, drain, (sink) -> {
			awaitLimitInForce(queue);
			return this.producer.inBatches(n, BATCH, (i) -> TaskRequest.of(queue, i), sink);
		});
		this.redis.deleteQueue(queue);
		Leases leases = Leases.of(backlog.analysis().startedMs(), count, windowMs);

		double dueRate = count * 1000.0 / windowMs / 2;
		int m = (int) Math.round(dueRate * this.settings.duration().toMillis() / 1000);
		long leadNanos = this.settings.lead().toNanos();
		Round delayed = this.rounds.measure(queue, this.settings.lead().plus(this.settings.duration()).plusMinutes(1),
				(sink) -> {
					Instant first = Instant.now().plusNanos(leadNanos);
					return this.producer.oneByOne(m,
							(i) -> TaskRequest.of(queue, i).at(first.plusNanos((long) (i * 1e9 / dueRate))), sink);
				});
		this.redis.deleteQueue(queue);

		Analysis a = backlog.analysis();
		Analysis b = delayed.analysis();
		Map<String, Object> fields = WorkloadResult.fields("n", n, "concurrency", backlog.concurrency(), "rate_limit",
				this.limit, "limit_per_s", count * 1000.0 / windowMs, "backlog_enqueue_per_s",
				backlog.produced().perSecond(), "starts_per_s", leases.perSecondAfterBurst(), "max_in_window",
				leases.maxInWindow(), "slot_p50_ms", leases.slotLateness(0.50), "slot_p99_ms",
				leases.slotLateness(0.99), "slot_max_ms", leases.slotLateness(1.0), "burst_ms", leases.burstMs(),
				"backlog_s", leases.seconds());
		if (a.costs() != null) {
			fields.put("backlog_redis_calls_per_task", a.costs().fields().get("redis_calls_per_task"));
			fields.put("backlog_redis_cpu_us_per_task", a.costs().fields().get("redis_cpu_us_per_task"));
		}
		fields.putAll(WorkloadResult.fields("delayed_n", m, "due_per_s", dueRate, "duration_s",
				this.settings.duration().toSeconds(), "enqueue_per_s", delayed.produced().perSecond()));
		// The lateness and costs on the line are the second round's; early, lost and dup
		// count both rounds, and violations the leases that broke the limit.
		return List.of(WorkloadResult.of(name(), fields, b)
			.withField("early", a.early() + b.early())
			.withField("lost", a.lost() + b.lost())
			.withField("dup", a.dup() + b.dup())
			.withField("violations", leases.violations()));
	}

	/**
	 * Wait until the handler's start wrote the configured limit, so that no task of the
	 * round is leased before it applies.
	 * @param queue the queue
	 */
	private void awaitLimitInForce(String queue) {
		long deadline = System.nanoTime() + LIMITS_WRITTEN.toNanos();
		while (!this.configured.equals(this.queues.limits(queue))) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Queue '" + queue + "' did not get its limits " + this.configured
						+ " within " + LIMITS_WRITTEN + ": it has " + this.queues.limits(queue));
			}
			Pause.millis(10);
		}
	}

	/**
	 * The leases of a backlog under a rate limit of {@code count} per {@code windowMs},
	 * in Redis time.
	 *
	 * @param sortedMs the lease times, sorted
	 * @param count the limit's count
	 * @param windowMs the limit's window
	 * @param slotLatenessMs for each lease {@code i >= count}, its time less the end of
	 * the window of lease {@code i - count}, sorted (negative: the limit was broken)
	 */
	record Leases(long[] sortedMs, int count, long windowMs, long[] slotLatenessMs) {

		static Leases of(long[] startedMs, int count, long windowMs) {
			long[] sorted = startedMs.clone();
			Arrays.sort(sorted);
			long[] slots = new long[Math.max(0, sorted.length - count)];
			for (int i = count; i < sorted.length; i++) {
				slots[i - count] = sorted[i] - (sorted[i - count] + windowMs);
			}
			Arrays.sort(slots);
			return new Leases(sorted, count, windowMs, slots);
		}

		/**
		 * The starts after the first burst: the last lease is a whole number {@code q} of
		 * windows' worth of leases after one in the first burst, and {@code q * count}
		 * starts over the time between the two is exactly the limit when every lease
		 * comes a window after the one {@code count} before it, however long the burst
		 * took.
		 * @return starts per second, 0 when the backlog fits in the first burst
		 */
		double perSecondAfterBurst() {
			int last = this.sortedMs.length - 1;
			int windows = (last >= 0) ? last / this.count : 0;
			long millis = (windows > 0) ? this.sortedMs[last] - this.sortedMs[last - windows * this.count] : 0;
			return (millis > 0) ? windows * (double) this.count * 1000.0 / millis : 0;
		}

		/**
		 * How long the first burst of {@code count} leases took.
		 * @return milliseconds from the first lease to the {@code count}-th
		 */
		long burstMs() {
			int last = Math.min(this.count, this.sortedMs.length) - 1;
			return (last > 0) ? this.sortedMs[last] - this.sortedMs[0] : 0;
		}

		/**
		 * From the first lease to the last.
		 * @return seconds
		 */
		double seconds() {
			return (this.sortedMs.length > 1) ? (this.sortedMs[this.sortedMs.length - 1] - this.sortedMs[0]) / 1000.0
					: 0;
		}

		/**
		 * The most leases in any span of the window, {@code [t, t + window)}.
		 * @return the count
		 */
		int maxInWindow() {
			int most = 0;
			int end = 0;
			for (int start = 0; start < this.sortedMs.length; start++) {
				while (end < this.sortedMs.length && this.sortedMs[end] < this.sortedMs[start] + this.windowMs) {
					end++;
				}
				most = Math.max(most, end - start);
			}
			return most;
		}

		long slotLateness(double fraction) {
			return Analysis.percentile(this.slotLatenessMs, fraction);
		}

		/**
		 * Leases that came before the window of the lease {@code count} before them
		 * ended: each made one span of the window hold more than {@code count}.
		 * @return the count
		 */
		long violations() {
			return Arrays.stream(this.slotLatenessMs).filter((lateness) -> lateness < 0).count();
		}

	}

}

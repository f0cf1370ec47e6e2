package dev.delayedtasks.benchmarks;

import java.nio.file.Path;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * What to run and how big, under {@code bench} ({@code --workload} and {@code --size} are
 * short for {@code bench.workload} and {@code bench.size}). With {@link Size#TINY} every
 * workload takes its smoke size and the sizes given here are ignored.
 *
 * @param workload comma-separated workload names, or {@code all}
 * @param size full sizes, or tiny smoke sizes
 * @param reportDir where HTML reports go; {@code target/reports} of this module by
 * default
 * @param seed seed of every random delay, so runs schedule the same tasks
 * @param warmupTasks tasks run before the first workload, to warm up the JIT and Redis;
 * 50,000 by default, as with 5,000 the compiler threads still took a third of the CPU
 * during the measured rounds
 * @param delayed the delayed workload
 * @param immediate the immediate workload
 * @param retry the retry workload
 * @param backlog the backlog workload
 * @param memory the memory workload
 * @param steady the steady workload
 * @param baseline the Redis baseline
 * @param producers the producers workload
 * @param async the async workload
 * @param reactive the reactive workload
 * @param rateLimited the rate-limited workload; its queue's limit is
 * {@code bench.rate-limited.rate-limit} (1000/1s in {@code application.yml}), which
 * {@code application.yml} passes on as the queue's {@code rate-limit}, as it does the
 * handler concurrency
 * @param manyKeys the many-keys workload; its queue's key rate limit is
 * {@code bench.many-keys.key-rate-limit} (5/10s in {@code application.yml})
 * @param dashboard the dashboard workload
 * @param soak the soak, which only runs when named ({@code --workload=soak}) and is not
 * shrunk by {@link Size#TINY}
 * @author delayed-tasks
 * @since 0.1.0
 */
@ConfigurationProperties("bench")
public record BenchmarkProperties(@DefaultValue("all") String workload, @DefaultValue("full") Size size,
		@Nullable Path reportDir, @DefaultValue("42") long seed, @DefaultValue("50000") int warmupTasks,
		@DefaultValue Delayed delayed, @DefaultValue Immediate immediate, @DefaultValue Retry retry,
		@DefaultValue Backlog backlog, @DefaultValue Memory memory, @DefaultValue Steady steady,
		@DefaultValue Baseline baseline, @DefaultValue Producers producers, @DefaultValue InFlight async,
		@DefaultValue InFlight reactive, @DefaultValue RateLimited rateLimited, @DefaultValue ManyKeys manyKeys,
		@DefaultValue Dashboard dashboard, @DefaultValue Soak soak) {

	/**
	 * Create the properties, replacing every size by its smoke size when {@code size} is
	 * {@link Size#TINY}.
	 */
	public BenchmarkProperties {
		if (size == Size.TINY) {
			warmupTasks = 100;
			delayed = Delayed.TINY;
			immediate = Immediate.TINY;
			retry = Retry.TINY;
			backlog = Backlog.TINY;
			memory = Memory.TINY;
			steady = Steady.TINY;
			baseline = Baseline.TINY;
			producers = Producers.TINY;
			async = InFlight.TINY;
			reactive = InFlight.TINY;
			rateLimited = RateLimited.TINY;
			manyKeys = ManyKeys.TINY;
			dashboard = Dashboard.TINY;
		}
	}

	/**
	 * How big the workloads are.
	 */
	public enum Size {

		/** The sizes of the issue and docs/performance.md. */
		FULL,

		/** Smoke sizes that finish in seconds, for CI. */
		TINY

	}

	/**
	 * One producer schedules {@code tasks} as fast as it can, delays uniform in
	 * [{@code minDelay}, {@code maxDelay}].
	 *
	 * @param tasks how many tasks
	 * @param minDelay the shortest delay
	 * @param maxDelay the longest delay
	 */
	public record Delayed(@DefaultValue("20000") int tasks, @DefaultValue("2s") Duration minDelay,
			@DefaultValue("7s") Duration maxDelay) {

		static final Delayed TINY = new Delayed(200, Duration.ofMillis(200), Duration.ofMillis(700));

	}

	/**
	 * Tasks without delay, scheduled one by one and then in {@code scheduleAll} batches.
	 *
	 * @param tasks how many tasks in each of the two rounds
	 * @param batch requests per {@code scheduleAll} call
	 */
	public record Immediate(@DefaultValue("50000") int tasks, @DefaultValue("1000") int batch) {

		static final Immediate TINY = new Immediate(500, 100);

	}

	/**
	 * Tasks without delay of which every {@code failEvery}-th fails its first attempt;
	 * the back-off is {@code delayed-tasks.queues.bench-retry.retry.delay}.
	 *
	 * @param tasks how many tasks
	 * @param failEvery which tasks fail once
	 */
	public record Retry(@DefaultValue("5000") int tasks, @DefaultValue("5") int failEvery) {

		static final Retry TINY = new Retry(100, 5);

	}

	/**
	 * A backlog of tasks due far ahead, scheduled in {@code scheduleAll} batches, then
	 * the delayed workload on the same queue.
	 *
	 * @param tasks how many backlog tasks
	 * @param ahead how far ahead the backlog is due
	 * @param batch requests per {@code scheduleAll} call
	 */
	public record Backlog(@DefaultValue("1000000") int tasks, @DefaultValue("3h") Duration ahead,
			@DefaultValue("1000") int batch) {

		static final Backlog TINY = new Backlog(5000, Duration.ofHours(3), 1000);

	}

	/**
	 * Bytes per task in Redis for scheduled, ready and dead tasks.
	 *
	 * @param tasks how many tasks of each kind
	 * @param payloadBytes size of each payload as JSON
	 * @param batch requests per {@code scheduleAll} call
	 */
	public record Memory(@DefaultValue("100000") int tasks, @DefaultValue("100") int payloadBytes,
			@DefaultValue("1000") int batch) {

		static final Memory TINY = new Memory(1000, 100, 100);

	}

	/**
	 * A constant rate of tasks with delays uniform in [0, {@code maxDelay}].
	 *
	 * @param rate tasks per second
	 * @param duration how long the producer runs
	 * @param maxDelay the longest delay
	 */
	public record Steady(@DefaultValue("2000") int rate, @DefaultValue("60s") Duration duration,
			@DefaultValue("1s") Duration maxDelay) {

		static final Steady TINY = new Steady(200, Duration.ofSeconds(2), Duration.ofSeconds(1));

		int tasks() {
			return (int) (this.rate * this.duration.toMillis() / 1000);
		}

	}

	/**
	 * Loops of single calls straight to Redis, from one thread and from {@code threads}.
	 *
	 * @param calls calls per loop
	 * @param threads threads of the concurrent loops
	 */
	public record Baseline(@DefaultValue("20000") int calls, @DefaultValue("16") int threads) {

		static final Baseline TINY = new Baseline(200, 4);

	}

	/**
	 * Tasks scheduled by {@code threads} threads calling {@code schedule} at once.
	 *
	 * @param tasks how many tasks in all
	 * @param threads how many producer threads
	 * @param delay the tasks' delay: zero (the default) has the handler run them while
	 * the producers work; a delay longer than the producing lets the producers have the
	 * machine to themselves
	 */
	public record Producers(@DefaultValue("100000") int tasks, @DefaultValue("16") int threads,
			@DefaultValue("0s") Duration delay) {

		static final Producers TINY = new Producers(500, 4, Duration.ZERO);

	}

	/**
	 * Tasks scheduled by one thread through the non-blocking API, with at most
	 * {@code inFlight} calls not yet completed.
	 *
	 * @param tasks how many tasks
	 * @param inFlight the most calls in flight
	 * @param delay the tasks' delay: zero (the default) has the handler run them while
	 * the producer works; a delay longer than the producing lets the producer have the
	 * machine to itself
	 */
	public record InFlight(@DefaultValue("100000") int tasks, @DefaultValue("1000") int inFlight,
			@DefaultValue("0s") Duration delay) {

		static final InFlight TINY = new InFlight(500, 50, Duration.ZERO);

	}

	/**
	 * A queue with a rate limit: a backlog of {@code tasks} scheduled at once, then tasks
	 * due at half the limit's rate for {@code duration}, each {@code lead} or more after
	 * the producer's first call.
	 *
	 * @param tasks how many tasks in the backlog
	 * @param duration how long tasks fall due in the second round
	 * @param lead how long after the producer's first call the second round's first task
	 * is due
	 */
	public record RateLimited(@DefaultValue("20000") int tasks, @DefaultValue("10s") Duration duration,
			@DefaultValue("2s") Duration lead) {

		static final RateLimited TINY = new RateLimited(1500, Duration.ofSeconds(1), Duration.ofMillis(500));

	}

	/**
	 * Claims of a queue whose ready tasks are spread round-robin over {@code keys} rate
	 * keys, against a queue of the same shape without rate keys, in {@code rounds} pairs
	 * of rounds (control first). The queue's key rate limit is
	 * {@code bench.many-keys.key-rate-limit} (5/10s in {@code application.yml}).
	 *
	 * @param keys how many rate keys
	 * @param tasksPerKey tasks per key: one primes every key's window, the others are
	 * claimed while every key has its window; at most the limit's count, so that no task
	 * is set aside
	 * @param claimBatch tasks asked for per claim, as a dispatcher of that concurrency
	 * asks
	 * @param rounds how many pairs of rounds, one with rate keys and one without, in
	 * turn: the fastest of each kind is reported, since a busy machine only adds time
	 */
	public record ManyKeys(@DefaultValue("10000") int keys, @DefaultValue("3") int tasksPerKey,
			@DefaultValue("16") int claimBatch, @DefaultValue("3") int rounds) {

		static final ManyKeys TINY = new ManyKeys(500, 3, 16, 1);

	}

	/**
	 * The dashboard's views, read through its HTTP API while Redis holds {@code tasks}
	 * scheduled tasks in {@code queues} queues, and again while it holds
	 * {@code smallTasks} in {@code smallQueues}, to show whether a view's cost grows with
	 * the data. The first queue holds half of the tasks, the others share the rest.
	 *
	 * @param queues how many queues, all in the queue index
	 * @param tasks how many scheduled tasks in all
	 * @param smallQueues how many queues in the small fill
	 * @param smallTasks how many scheduled tasks in the small fill
	 * @param views measured views of each kind, after as many unmeasured ones (a fifth,
	 * at least one)
	 * @param batch requests per {@code scheduleAll} call of the fill
	 */
	public record Dashboard(@DefaultValue("1000") int queues, @DefaultValue("1000000") int tasks,
			@DefaultValue("10") int smallQueues, @DefaultValue("1000") int smallTasks, @DefaultValue("50") int views,
			@DefaultValue("1000") int batch) {

		static final Dashboard TINY = new Dashboard(20, 2000, 5, 200, 5, 500);

	}

	/**
	 * Mixed load for {@code duration} on worker processes of their own, with a worker
	 * killed every {@code minKillInterval} to {@code maxKillInterval} and Redis stopped
	 * once for {@code outage}; every task must end in exactly one terminal state.
	 *
	 * @param duration how long tasks are scheduled
	 * @param rate tasks scheduled per second
	 * @param maxDelay the longest delay of a task (delays are uniform in [0, max])
	 * @param workers how many worker processes run at once
	 * @param minKillInterval the shortest time between two worker kills
	 * @param maxKillInterval the longest time between two worker kills
	 * @param outage how long Redis is stopped, once, a third into the run; zero for no
	 * outage (there is none with {@code --redis-url}: only a private server is stopped)
	 */
	public record Soak(@DefaultValue("10m") Duration duration, @DefaultValue("50") int rate,
			@DefaultValue("5s") Duration maxDelay, @DefaultValue("2") int workers,
			@DefaultValue("20s") Duration minKillInterval, @DefaultValue("40s") Duration maxKillInterval,
			@DefaultValue("30s") Duration outage) {

	}

}

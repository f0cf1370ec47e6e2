package dev.delayedtasks.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskRequest;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code async}: tasks without delay, scheduled by one thread calling
 * {@code scheduleAsync} with at most {@code in-flight} futures not yet completed, while
 * the queue's handler runs. Reports the enqueue rate (first call to last completion) and
 * the end-to-end throughput.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(9)
class AsyncWorkload implements Workload {

	private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

	private static final Duration TIMEOUT = Duration.ofMinutes(5);

	private final Rounds rounds;

	private final DelayedTaskScheduler scheduler;

	private final RedisProbe redis;

	private final BenchmarkProperties.InFlight settings;

	AsyncWorkload(Rounds rounds, DelayedTaskScheduler scheduler, RedisProbe redis, BenchmarkProperties properties) {
		this.rounds = rounds;
		this.scheduler = scheduler;
		this.redis = redis;
		this.settings = properties.async();
	}

	@Override
	public String name() {
		return "async";
	}

	@Override
	public List<WorkloadResult> run() {
		String queue = Queues.ASYNC;
		int n = this.settings.tasks();
		int inFlight = this.settings.inFlight();
		Round round = this.rounds.measure(queue, TIMEOUT, (sink) -> produce(queue, n, inFlight, sink));
		this.redis.deleteQueue(queue);
		return List.of(WorkloadResult.of(name(),
				WorkloadResult.fields("n", round.analysis().expected(), "concurrency", round.concurrency(), "producer",
						"scheduleAsync", "in_flight", inFlight, "delay_ms", this.settings.delay().toMillis(),
						"enqueue_per_s", round.produced().perSecond(), "throughput_per_s", round.throughputPerSecond(),
						"producer_cpu_us", round.produced().cpuMicrosPerTask()),
				round.analysis()));
	}

	private Produced produce(String queue, int n, int inFlight, EnqueueSink sink) {
		Semaphore permits = new Semaphore(inFlight);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		long startCpu = CPU.getCurrentThreadCpuTime();
		long startMicros = Recording.nowMicros();
		for (int i = 0; i < n && failure.get() == null; i++) {
			permits.acquireUninterruptibly();
			this.scheduler.scheduleAsync(TaskRequest.of(queue, i).delay(this.settings.delay()))
				.whenComplete((id, ex) -> {
					if (ex != null) {
						failure.compareAndSet(null, ex);
					}
					else {
						sink.enqueued(id, Recording.nowMicros());
					}
					permits.release();
				});
		}
		long cpu = CPU.getCurrentThreadCpuTime() - startCpu;
		permits.acquireUninterruptibly(inFlight);
		if (failure.get() != null) {
			throw new IllegalStateException("scheduleAsync failed", failure.get());
		}
		return new Produced(n, startMicros, Recording.nowMicros(), cpu);
	}

}

package dev.delayedtasks.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code producers}: tasks without delay, scheduled by several threads calling
 * {@code schedule} at once while the queue's handler runs. Reports the enqueue rate of
 * all threads together and the end-to-end throughput.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(8)
class ProducersWorkload implements Workload {

	private static final Duration TIMEOUT = Duration.ofMinutes(5);

	private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

	private final Rounds rounds;

	private final DelayedTaskScheduler scheduler;

	private final RedisProbe redis;

	private final BenchmarkProperties.Producers settings;

	ProducersWorkload(Rounds rounds, DelayedTaskScheduler scheduler, RedisProbe redis, BenchmarkProperties properties) {
		this.rounds = rounds;
		this.scheduler = scheduler;
		this.redis = redis;
		this.settings = properties.producers();
	}

	@Override
	public String name() {
		return "producers";
	}

	@Override
	public List<WorkloadResult> run() {
		String queue = Queues.PRODUCERS;
		int n = this.settings.tasks();
		int threads = this.settings.threads();
		Round round = this.rounds.measure(queue, TIMEOUT, (sink) -> produce(queue, n, threads, sink));
		this.redis.deleteQueue(queue);
		return List.of(WorkloadResult.of(name(),
				WorkloadResult.fields("n", round.analysis().expected(), "concurrency", round.concurrency(), "producer",
						"schedule", "threads", threads, "delay_ms", this.settings.delay().toMillis(), "enqueue_per_s",
						round.produced().perSecond(), "throughput_per_s", round.throughputPerSecond(),
						"producer_cpu_us", round.produced().cpuMicrosPerTask()),
				round.analysis()));
	}

	private Produced produce(String queue, int n, int threads, EnqueueSink sink) {
		AtomicInteger next = new AtomicInteger();
		AtomicLong cpu = new AtomicLong();
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		long startMicros = Recording.nowMicros();
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				futures.add(executor.submit(() -> {
					long startCpu = CPU.getCurrentThreadCpuTime();
					for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
						TaskId id = this.scheduler.schedule(TaskRequest.of(queue, i).delay(this.settings.delay()));
						sink.enqueued(id, Recording.nowMicros());
					}
					cpu.addAndGet(CPU.getCurrentThreadCpuTime() - startCpu);
				}));
			}
			for (Future<?> future : futures) {
				future.get();
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException("A producer thread failed", ex);
		}
		finally {
			executor.shutdownNow();
		}
		return new Produced(n, startMicros, Recording.nowMicros(), cpu.get());
	}

}

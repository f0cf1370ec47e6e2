package dev.delayedtasks.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.List;

import dev.delayedtasks.ReactiveDelayedTaskScheduler;
import dev.delayedtasks.TaskRequest;
import reactor.core.publisher.Flux;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code reactive}: tasks without delay, scheduled through the
 * {@link ReactiveDelayedTaskScheduler} as one {@code Flux} with at most {@code in-flight}
 * calls subscribed at once ({@code flatMap} concurrency), while the queue's handler runs.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(10)
class ReactiveWorkload implements Workload {

	private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

	private static final Duration TIMEOUT = Duration.ofMinutes(5);

	private final Rounds rounds;

	private final ReactiveDelayedTaskScheduler scheduler;

	private final RedisProbe redis;

	private final BenchmarkProperties.InFlight settings;

	ReactiveWorkload(Rounds rounds, ReactiveDelayedTaskScheduler scheduler, RedisProbe redis,
			BenchmarkProperties properties) {
		this.rounds = rounds;
		this.scheduler = scheduler;
		this.redis = redis;
		this.settings = properties.reactive();
	}

	@Override
	public String name() {
		return "reactive";
	}

	@Override
	public List<WorkloadResult> run() {
		String queue = Queues.REACTIVE;
		int n = this.settings.tasks();
		int inFlight = this.settings.inFlight();
		Round round = this.rounds.measure(queue, TIMEOUT, (sink) -> {
			long startCpu = CPU.getCurrentThreadCpuTime();
			long startMicros = Recording.nowMicros();
			Flux.range(0, n)
				.flatMap((i) -> this.scheduler.schedule(TaskRequest.of(queue, i).delay(this.settings.delay())),
						inFlight)
				.doOnNext((id) -> sink.enqueued(id, Recording.nowMicros()))
				.blockLast(TIMEOUT);
			return new Produced(n, startMicros, Recording.nowMicros(), CPU.getCurrentThreadCpuTime() - startCpu);
		});
		this.redis.deleteQueue(queue);
		return List.of(WorkloadResult.of(name(),
				WorkloadResult.fields("n", round.analysis().expected(), "concurrency", round.concurrency(), "producer",
						"ReactiveDelayedTaskScheduler", "in_flight", inFlight, "delay_ms",
						this.settings.delay().toMillis(), "enqueue_per_s", round.produced().perSecond(),
						"throughput_per_s", round.throughputPerSecond()),
				round.analysis()));
	}

}

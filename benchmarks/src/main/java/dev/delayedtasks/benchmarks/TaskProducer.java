package dev.delayedtasks.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.TrackedTask;

import org.springframework.stereotype.Component;

/**
 * One producer on the calling thread, through the application's
 * {@link DelayedTaskScheduler}: {@code schedule} in a loop (as fast as it can or at a
 * fixed rate) or {@code scheduleAll} in batches. Requests are built inside the loop, as
 * an application would build them.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class TaskProducer {

	private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

	private final DelayedTaskScheduler scheduler;

	TaskProducer(DelayedTaskScheduler scheduler) {
		this.scheduler = scheduler;
	}

	/**
	 * Call {@code schedule} once per task, as fast as it returns.
	 * @param count how many tasks
	 * @param requests the request of task {@code i}
	 * @param sink hears of every task
	 * @return what was done
	 */
	Produced oneByOne(int count, IntFunction<TaskRequest> requests, EnqueueSink sink) {
		return atRate(count, 0, requests, sink);
	}

	/**
	 * Call {@code schedule} once per task, starting task {@code i} at {@code i / rate}
	 * seconds (or as soon as the previous call returned, when that is later).
	 * @param count how many tasks
	 * @param perSecond the rate, or 0 for as fast as possible
	 * @param requests the request of task {@code i}
	 * @param sink hears of every task
	 * @return what was done
	 */
	Produced atRate(int count, double perSecond, IntFunction<TaskRequest> requests, EnqueueSink sink) {
		long startNanos = System.nanoTime();
		long startCpu = CPU.getCurrentThreadCpuTime();
		long startMicros = Recording.nowMicros();
		for (int i = 0; i < count; i++) {
			if (perSecond > 0) {
				long wait = startNanos + (long) (i * 1e9 / perSecond) - System.nanoTime();
				if (wait > 0) {
					LockSupport.parkNanos(wait);
				}
			}
			TaskId id = this.scheduler.schedule(requests.apply(i));
			sink.enqueued(id, Recording.nowMicros());
		}
		return new Produced(count, startMicros, Recording.nowMicros(), CPU.getCurrentThreadCpuTime() - startCpu);
	}

	/**
	 * Call {@code track} once per task, as fast as it returns, from some threads at once.
	 * @param count how many tasks
	 * @param threads how many threads call it
	 * @param requests the request of task {@code i}
	 * @param sink hears of every task, from every thread
	 * @param ends receives, per task, a future of when this process learned its outcome
	 * (local clock, epoch microseconds); safe for use from every thread
	 * @return what was done
	 */
	Produced tracked(int count, int threads, IntFunction<TaskRequest> requests, EnqueueSink sink,
			List<CompletableFuture<Long>> ends) {
		AtomicInteger next = new AtomicInteger();
		AtomicLong cpu = new AtomicLong();
		Runnable producer = () -> {
			long startCpu = CPU.getCurrentThreadCpuTime();
			for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
				TrackedTask tracked = this.scheduler.track(requests.apply(i));
				sink.enqueued(tracked.id(), Recording.nowMicros());
				ends.add(tracked.outcome().thenApply((outcome) -> Recording.nowMicros()));
			}
			cpu.addAndGet(CPU.getCurrentThreadCpuTime() - startCpu);
		};
		long startMicros = Recording.nowMicros();
		if (threads == 1) {
			producer.run();
			return new Produced(count, startMicros, Recording.nowMicros(), cpu.get());
		}
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				futures.add(executor.submit(producer));
			}
			for (Future<?> future : futures) {
				future.get();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while tracking tasks", ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("A producer thread failed", ex);
		}
		finally {
			executor.shutdownNow();
		}
		return new Produced(count, startMicros, Recording.nowMicros(), cpu.get());
	}

	/**
	 * Call {@code scheduleAll} with {@code batch} requests at a time.
	 * @param count how many tasks
	 * @param batch requests per call
	 * @param requests the request of task {@code i}
	 * @param sink hears of every task
	 * @return what was done
	 */
	Produced inBatches(int count, int batch, IntFunction<TaskRequest> requests, EnqueueSink sink) {
		long startMicros = Recording.nowMicros();
		for (int from = 0; from < count; from += batch) {
			int to = Math.min(count, from + batch);
			List<TaskRequest> chunk = new ArrayList<>(to - from);
			for (int i = from; i < to; i++) {
				chunk.add(requests.apply(i));
			}
			List<ScheduleResult> results = this.scheduler.scheduleAll(chunk);
			long now = Recording.nowMicros();
			for (ScheduleResult result : results) {
				sink.enqueued(result.id(), now);
			}
		}
		return new Produced(count, startMicros, Recording.nowMicros());
	}

}

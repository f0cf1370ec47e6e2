package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;

import org.springframework.core.annotation.Order;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Component;

/**
 * {@code redis-baseline}: what Redis allows through the same client, so that every other
 * figure can be read as a ratio to it. A tight loop of single round trips ({@code PING})
 * and of the {@code enqueue} script (one task due in three hours, so no handler runs it)
 * through the application's connection factory, first from one thread and then from
 * {@code threads} threads at once (Lettuce pipelines their commands on the shared
 * connection). No handler runs meanwhile.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(0)
class RedisBaselineWorkload implements Workload {

	private static final String QUEUE = "bench-baseline";

	private static final String ENVELOPE = "{\"h\":{},\"b\":" + "1".repeat(100) + "}";

	private final StringRedisTemplate redis;

	private final StoreScripts scripts;

	private final RedisProbe probe;

	private final BenchmarkProperties.Baseline settings;

	RedisBaselineWorkload(StringRedisTemplate redis, StoreScripts scripts, RedisProbe probe,
			BenchmarkProperties properties) {
		this.redis = redis;
		this.scripts = scripts;
		this.probe = probe;
		this.settings = properties.baseline();
	}

	@Override
	public String name() {
		return "redis-baseline";
	}

	@Override
	public List<WorkloadResult> run() {
		int n = this.settings.calls();
		int threads = this.settings.threads();
		PartitionKeys keys = this.probe.keys(QUEUE);
		IntConsumer ping = (i) -> this.redis.execute((RedisCallback<String>) (connection) -> connection.ping());
		IntConsumer enqueue = (i) -> enqueue(keys);
		// Once each untimed, so that both paths are compiled and the script is loaded.
		perSecond(n / 4, 1, ping);
		perSecond(n / 4, 1, enqueue);
		double ping1 = perSecond(n, 1, ping);
		double enqueue1 = perSecond(n, 1, enqueue);
		double pingN = perSecond(n, threads, ping);
		double enqueueN = perSecond(n, threads, enqueue);
		this.probe.deleteQueue(QUEUE);
		return List.of(
				WorkloadResult.of(name(),
						WorkloadResult.fields("n", n, "threads", threads, "ping_per_s", ping1, "enqueue_script_per_s",
								enqueue1, "ping_threads_per_s", pingN, "enqueue_script_threads_per_s", enqueueN),
						null));
	}

	private void enqueue(PartitionKeys keys) {
		String id = TaskId.generate().value();
		this.scripts.run(Script.ENQUEUE,
				List.of(keys.sched(), keys.ready(), keys.wake(), keys.tick(), keys.stats(), keys.meta(), keys.task(id),
						keys.payload(id), keys.unique(null)),
				List.of(keys.base(), "1", "1", "16", "0", id, "D", Long.toString(Duration.ofHours(3).toMillis()), "4",
						"0", "0", "0", ENVELOPE, "", "", ""),
				QUEUE, id);
	}

	/**
	 * Run {@code call} {@code n} times, spread over {@code threads} threads.
	 * @param n the calls in all
	 * @param threads the threads
	 * @param call one call
	 * @return calls per second
	 */
	static double perSecond(int n, int threads, IntConsumer call) {
		AtomicInteger next = new AtomicInteger();
		Runnable loop = () -> {
			for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
				call.accept(i);
			}
		};
		long start = System.nanoTime();
		if (threads == 1) {
			loop.run();
		}
		else {
			ExecutorService executor = Executors.newFixedThreadPool(threads);
			try {
				List<Future<?>> futures = new ArrayList<>();
				for (int t = 0; t < threads; t++) {
					futures.add(executor.submit(loop));
				}
				for (Future<?> future : futures) {
					future.get();
				}
			}
			catch (Exception ex) {
				throw new IllegalStateException("Baseline loop failed", ex);
			}
			finally {
				executor.shutdownNow();
			}
		}
		return n * 1e9 / (System.nanoTime() - start);
	}

}

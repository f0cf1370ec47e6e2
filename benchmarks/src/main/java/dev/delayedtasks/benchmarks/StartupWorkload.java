package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import dev.delayedtasks.worker.HandlerContainer;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code startup}: the first {@code schedule} call of the process and the first task run
 * against later ones (the warm start, {@code delayed-tasks.warm-start}). Runs before the
 * benchmark's warm-up, so its first call is the first of the JVM. Starts the handler,
 * waits a second, then schedules 101 tasks 10 ms apart (each call timed), each due 300 ms
 * after it was scheduled, and compares the first call and the first task's lateness with
 * the others.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(-1)
class StartupWorkload implements Workload {

	private static final int LATER = 100;

	/** Between two calls: a trickle, so every run finds an idle worker. */
	private static final long PACE_MILLIS = 10;

	/** After the handler started: its own startup is not what is measured. */
	private static final long SETTLE_MILLIS = 1000;

	private static final Duration DELAY = Duration.ofMillis(300);

	private final DelayedTaskScheduler scheduler;

	private final DelayedTaskHandlerRegistry handlers;

	private final TaskRecorder recorder;

	private final RedisProbe redis;

	StartupWorkload(DelayedTaskScheduler scheduler, DelayedTaskHandlerRegistry handlers, TaskRecorder recorder,
			RedisProbe redis) {
		this.scheduler = scheduler;
		this.handlers = handlers;
		this.recorder = recorder;
		this.redis = redis;
	}

	@Override
	public String name() {
		return "startup";
	}

	@Override
	public boolean beforeWarmup() {
		return true;
	}

	@Override
	public List<WorkloadResult> run() {
		String queue = Queues.STARTUP;
		HandlerContainer handler = this.handlers.getHandler(queue)
			.orElseThrow(() -> new IllegalStateException("No handler '" + queue + "'"));
		handler.start();
		Recording recording = this.recorder.start(queue);
		Pause.millis(SETTLE_MILLIS);
		long[] micros = new long[LATER + 1];
		try {
			for (int i = 0; i <= LATER; i++) {
				long start = System.nanoTime();
				TaskId id = this.scheduler
					.schedule(TaskRequest.of(queue, new BenchmarkHandlers.StartupTask(i)).delay(DELAY));
				micros[i] = (System.nanoTime() - start) / 1000;
				recording.enqueued(id, Recording.nowMicros());
				Pause.millis(PACE_MILLIS);
			}
			recording.awaitFinalRuns(Duration.ofSeconds(30));
		}
		finally {
			this.recorder.stop(recording);
			handler.stop();
		}
		List<TaskRun> runs = recording.runs().stream().sorted(Comparator.comparingLong(TaskRun::dueMs)).toList();
		long firstLateness = runs.isEmpty() ? -1 : runs.get(0).latenessMs();
		long[] later = runs.stream().skip(1).mapToLong(TaskRun::latenessMs).sorted().toArray();
		long[] laterCalls = Arrays.copyOfRange(micros, 1, micros.length);
		Arrays.sort(laterCalls);
		this.redis.deleteQueue(queue);
		return List.of(WorkloadResult.of(name(),
				WorkloadResult.fields("first_schedule_us", micros[0], "later_schedule_p50_us",
						laterCalls[laterCalls.length / 2], "later_schedule_max_us", laterCalls[laterCalls.length - 1],
						"first_run_lateness_ms", firstLateness, "later_runs_lateness_p50_ms",
						(later.length > 0) ? later[later.length / 2] : -1, "later_runs_lateness_max_ms",
						(later.length > 0) ? later[later.length - 1] : -1, "runs", runs.size(), "lost",
						LATER + 1 - runs.size()),
				null));
	}

}

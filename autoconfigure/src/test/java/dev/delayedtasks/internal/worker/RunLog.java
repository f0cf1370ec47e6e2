package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import org.jspecify.annotations.Nullable;

/**
 * What test handlers ran, on which instance, when, and how each run ended. Shared by the
 * contexts of one test (registered as a bean in each), never static.
 */
final class RunLog {

	private final List<Run> runs = new CopyOnWriteArrayList<>();

	Run started(String instance, TaskContext context, @Nullable Object payload) {
		Run run = new Run(instance, context, payload, Thread.currentThread());
		this.runs.add(run);
		return run;
	}

	List<Run> runs() {
		return List.copyOf(this.runs);
	}

	int size() {
		return this.runs.size();
	}

	List<Run> of(TaskId id) {
		return this.runs.stream().filter((run) -> run.context().id().equals(id)).toList();
	}

	List<Run> on(String instance) {
		return this.runs.stream().filter((run) -> run.instance().equals(instance)).toList();
	}

	Map<TaskId, List<Run>> byId() {
		return this.runs.stream().collect(Collectors.groupingBy((run) -> run.context().id()));
	}

	long finishedCount() {
		return this.runs.stream().filter(Run::isFinished).count();
	}

	/**
	 * Lateness (claim time minus due time, Redis clock) of every run, sorted.
	 * @return the lateness in milliseconds
	 */
	List<Long> latenessMillis() {
		List<Long> lateness = new ArrayList<>(this.runs.stream()
			.map((run) -> Duration.between(run.context().dueAt(), run.context().startedAt()).toMillis())
			.toList());
		Collections.sort(lateness);
		return lateness;
	}

	static String describe(List<Long> sortedLateness) {
		if (sortedLateness.isEmpty()) {
			return "no runs";
		}
		int n = sortedLateness.size();
		return "n=" + n + " min=" + sortedLateness.get(0) + " p50=" + sortedLateness.get(n / 2) + " p90="
				+ sortedLateness.get(Math.min(n - 1, n * 9 / 10)) + " max=" + sortedLateness.get(n - 1) + " (ms)";
	}

	/**
	 * One run of a handler.
	 */
	static final class Run {

		private final String instance;

		private final TaskContext context;

		private final @Nullable Object payload;

		private final Thread thread;

		private final long startedNanos = System.nanoTime();

		private volatile long finishedNanos;

		private volatile boolean finished;

		private volatile boolean interrupted;

		Run(String instance, TaskContext context, @Nullable Object payload, Thread thread) {
			this.instance = instance;
			this.context = context;
			this.payload = payload;
			this.thread = thread;
		}

		String instance() {
			return this.instance;
		}

		TaskContext context() {
			return this.context;
		}

		@Nullable Object payload() {
			return this.payload;
		}

		Thread thread() {
			return this.thread;
		}

		long startedNanos() {
			return this.startedNanos;
		}

		long finishedNanos() {
			return this.finishedNanos;
		}

		void finished() {
			this.finishedNanos = System.nanoTime();
			this.finished = true;
		}

		void interrupted() {
			this.finishedNanos = System.nanoTime();
			this.interrupted = true;
		}

		boolean isFinished() {
			return this.finished;
		}

		boolean wasInterrupted() {
			return this.interrupted;
		}

		@Override
		public String toString() {
			return this.instance + ":" + this.context.id().value() + "#" + this.context.attempt() + "/"
					+ this.context.deliveryCount() + (this.finished ? " finished" : "")
					+ (this.interrupted ? " interrupted" : "");
		}

	}

}

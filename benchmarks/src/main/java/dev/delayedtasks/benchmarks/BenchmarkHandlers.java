package dev.delayedtasks.benchmarks;

import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;

import org.springframework.stereotype.Component;

/**
 * The workloads' handlers, one per queue, started and stopped by the workloads (never
 * with the application). They record the run and do nothing else, except where a workload
 * asks for failures.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class BenchmarkHandlers {

	private final TaskRecorder recorder;

	BenchmarkHandlers(TaskRecorder recorder) {
		this.recorder = recorder;
	}

	@DelayedTaskHandler(id = Queues.WARMUP, queue = Queues.WARMUP, concurrency = "${bench.warmup.concurrency}",
			autoStartup = "false")
	void warmup(TaskContext context) {
		this.recorder.record(context, TaskRun.Outcome.SUCCEEDED);
	}

	@DelayedTaskHandler(id = Queues.DELAYED, queue = Queues.DELAYED, concurrency = "${bench.delayed.concurrency}",
			autoStartup = "false")
	void delayed(TaskContext context) {
		this.recorder.record(context, TaskRun.Outcome.SUCCEEDED);
	}

	@DelayedTaskHandler(id = Queues.IMMEDIATE, queue = Queues.IMMEDIATE, concurrency = "${bench.immediate.concurrency}",
			autoStartup = "false")
	void immediate(TaskContext context) {
		this.recorder.record(context, TaskRun.Outcome.SUCCEEDED);
	}

	@DelayedTaskHandler(id = Queues.BACKLOG, queue = Queues.BACKLOG, concurrency = "${bench.backlog.concurrency}",
			autoStartup = "false")
	void backlog(TaskContext context) {
		this.recorder.record(context, TaskRun.Outcome.SUCCEEDED);
	}

	@DelayedTaskHandler(id = Queues.STEADY, queue = Queues.STEADY, concurrency = "${bench.steady.concurrency}",
			autoStartup = "false")
	void steady(TaskContext context) {
		this.recorder.record(context, TaskRun.Outcome.SUCCEEDED);
	}

	@DelayedTaskHandler(id = Queues.PRODUCERS, queue = Queues.PRODUCERS, concurrency = "${bench.producers.concurrency}",
			autoStartup = "false")
	void producers(TaskContext context) {
		this.recorder.record(context, TaskRun.Outcome.SUCCEEDED);
	}

	@DelayedTaskHandler(id = Queues.STARTUP, queue = Queues.STARTUP, autoStartup = "false")
	void startup(StartupTask task, TaskContext context) {
		this.recorder.record(context, TaskRun.Outcome.SUCCEEDED);
	}

	@DelayedTaskHandler(id = Queues.ASYNC, queue = Queues.ASYNC, concurrency = "${bench.async.concurrency}",
			autoStartup = "false")
	void async(TaskContext context) {
		this.recorder.record(context, TaskRun.Outcome.SUCCEEDED);
	}

	@DelayedTaskHandler(id = Queues.REACTIVE, queue = Queues.REACTIVE, concurrency = "${bench.reactive.concurrency}",
			autoStartup = "false")
	void reactive(TaskContext context) {
		this.recorder.record(context, TaskRun.Outcome.SUCCEEDED);
	}

	@DelayedTaskHandler(id = Queues.RATE_LIMITED, queue = Queues.RATE_LIMITED,
			concurrency = "${bench.rate-limited.concurrency}", autoStartup = "false")
	void rateLimited(TaskContext context) {
		this.recorder.record(context, TaskRun.Outcome.SUCCEEDED);
	}

	@DelayedTaskHandler(id = Queues.RETRY, queue = Queues.RETRY, concurrency = "${bench.retry.concurrency}",
			autoStartup = "false")
	void retry(RetryTask task, TaskContext context) {
		if (task.failFirst() && context.attempt() == 1) {
			this.recorder.record(context, TaskRun.Outcome.RETRIED);
			throw new IllegalStateException("Planned failure of task " + task.seq() + " on its first attempt");
		}
		this.recorder.record(context, TaskRun.Outcome.SUCCEEDED);
	}

	@DelayedTaskHandler(id = Queues.MEMORY_DEAD, queue = Queues.MEMORY_DEAD,
			concurrency = "${bench.memory.concurrency}", autoStartup = "false")
	void dead(TaskContext context) {
		this.recorder.record(context, TaskRun.Outcome.DEAD);
		throw new NonRetryableTaskException("Planned dead letter");
	}

	/**
	 * The payload of the startup workload: a record, so the first run reads it into a
	 * type (what the warm start prepares).
	 *
	 * @param seq the task's number
	 */
	record StartupTask(int seq) {

	}

	/**
	 * The payload of the retry workload.
	 *
	 * @param seq the task's number
	 * @param failFirst whether its first attempt fails
	 */
	record RetryTask(int seq, boolean failFirst) {

	}

}

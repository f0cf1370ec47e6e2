package dev.delayedtasks.deploy;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.annotation.DelayedTaskHandler;

/**
 * Handlers for the deployment tests: one per queue, each doing what its payload says and
 * recording the run.
 */
class DeployHandlers {

	private final List<TaskContext> runs = new CopyOnWriteArrayList<>();

	@DelayedTaskHandler(queue = "cl-bills")
	void bills(Command command, TaskContext context) {
		run(command, context);
	}

	@DelayedTaskHandler(queue = "orders")
	void orders(Command command, TaskContext context) {
		run(command, context);
	}

	@DelayedTaskHandler(queue = "mails")
	void mails(Command command, TaskContext context) {
		run(command, context);
	}

	@DelayedTaskHandler(queue = "sentinel-q")
	void sentinel(Command command, TaskContext context) {
		run(command, context);
	}

	private void run(Command command, TaskContext context) {
		this.runs.add(context);
		switch (command.action()) {
			case "succeed" -> {
			}
			case "fail-once" -> {
				if (context.attempt() < 2) {
					throw new IllegalStateException("failing once");
				}
			}
			case "always" -> throw new IllegalStateException("always failing, attempt " + context.attempt());
			default -> throw new IllegalArgumentException(command.action());
		}
	}

	List<TaskContext> runs(String queue, TaskId id) {
		return this.runs.stream().filter((run) -> run.queue().equals(queue) && run.id().equals(id)).toList();
	}

	record Command(String action) {
	}

}

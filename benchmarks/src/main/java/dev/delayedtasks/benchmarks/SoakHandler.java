package dev.delayedtasks.benchmarks;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.annotation.DelayedTaskHandler;

import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * The soak's handler, in worker processes only (the coordinator has no handler for the
 * soak queue): records the run in the {@link SoakLedger}, works for the task's time, and
 * then succeeds or fails as the task's kind says.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Profile(SoakWorkerRunner.PROFILE)
class SoakHandler {

	private final SoakLedger ledger;

	SoakHandler(SoakLedger ledger) {
		this.ledger = ledger;
	}

	@DelayedTaskHandler(id = Queues.SOAK, queue = Queues.SOAK, concurrency = "${bench.soak.concurrency}")
	void run(SoakTask task, TaskContext context) {
		this.ledger.started(context);
		Pause.millis(task.workMillis());
		boolean fails = task.fails(context.attempt());
		// Recorded before the handler returns: a kill between this and the ack makes the
		// task run again, which the ledger shows as a duplicate success.
		this.ledger.ended(context, !fails);
		if (fails) {
			throw new IllegalStateException("Planned failure of soak task " + task.seq() + " (" + task.kind()
					+ ") on attempt " + context.attempt());
		}
	}

}

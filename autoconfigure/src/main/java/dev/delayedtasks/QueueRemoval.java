package dev.delayedtasks;

import org.jspecify.annotations.Nullable;

/**
 * What {@link QueueControl#remove(String)} did: removed the queue, or why not.
 *
 * @param queue the queue
 * @param outcome removed, or the reason it was not
 * @param scheduled tasks waiting for their due time, when {@link Outcome#NOT_EMPTY}
 * @param ready tasks due and waiting for a worker, when {@link Outcome#NOT_EMPTY}
 * @param active tasks leased to workers, when {@link Outcome#NOT_EMPTY}
 * @param dead dead letters, when {@link Outcome#NOT_EMPTY}
 * @param handler this instance's handler of the queue ({@link Outcome#HANDLED_HERE}), or
 * the instance that holds the queue's timer ({@link Outcome#HANDLED_ELSEWHERE}); else
 * {@code null}
 * @author delayed-tasks
 * @since 0.1.0
 */
public record QueueRemoval(String queue, Outcome outcome, long scheduled, long ready, long active, long dead,
		@Nullable String handler) {

	/**
	 * Whether the queue was removed.
	 * @return whether it was
	 */
	public boolean removed() {
		return this.outcome == Outcome.REMOVED;
	}

	/**
	 * What happened, in a sentence that names the reason and what to do.
	 * @return the message
	 */
	public String message() {
		String refused = "Queue '" + this.queue + "' was not removed: ";
		return switch (this.outcome) {
			case REMOVED -> "Queue '" + this.queue + "' was removed from the index of known queues";
			case NOT_EMPTY -> refused + "it is not empty (scheduled " + this.scheduled + ", ready " + this.ready
					+ ", active " + this.active + ", dead " + this.dead
					+ "); let its tasks run or cancel them, and redrive or purge its dead letters";
			case HANDLED_HERE ->
				refused + "this instance has a handler for it (" + this.handler + "); remove the handler first";
			case HANDLED_ELSEWHERE -> refused + "instance " + this.handler
					+ " holds its timer, so a handler for it runs there; remove that handler first";
			case IN_USE -> refused + "a task was scheduled to it while it was being removed";
		};
	}

	/**
	 * Removed, or why not.
	 */
	public enum Outcome {

		/** Removed from the index, its leftover keys deleted. */
		REMOVED,

		/** It holds scheduled, ready, active or dead tasks. */
		NOT_EMPTY,

		/** This instance has a handler for it. */
		HANDLED_HERE,

		/** Another instance holds its timer: a handler for it runs there. */
		HANDLED_ELSEWHERE,

		/**
		 * A task was scheduled to it while it was being removed: it stays in the index.
		 */
		IN_USE

	}

}

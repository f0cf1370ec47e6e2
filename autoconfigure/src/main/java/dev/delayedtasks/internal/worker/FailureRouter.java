package dev.delayedtasks.internal.worker;

import java.time.Duration;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.internal.store.TaskFailure;

import org.springframework.core.retry.RetryPolicy;
import org.springframework.util.backoff.BackOffExecution;

/**
 * Decides what a failed run leads to: dead letters at once for
 * {@link NonRetryableTaskException} and for failures the retry policy does not retry
 * ({@link RetryPolicy#shouldRetry}: the exception types it includes and excludes, as
 * {@code delayed-tasks.retry.exception-includes} and {@code exception-excludes} build
 * it); otherwise a retry after the policy's back-off for that attempt. Whether retries
 * are exhausted is decided by the task's stored max attempts, not here: the policy only
 * gives the delay.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class FailureRouter {

	private static final int MAX_BACK_OFF_STEPS = 1000;

	/**
	 * Decide about a failed run.
	 * @param failure what the handler threw
	 * @param failedRuns runs that failed before this one
	 * @param policy the handler's retry policy
	 * @return the failure to record
	 */
	public TaskFailure route(Throwable failure, int failedRuns, RetryPolicy policy) {
		if (failure instanceof NonRetryableTaskException || !policy.shouldRetry(failure)) {
			return TaskFailure.of(null, FailureReason.NON_RETRYABLE, failure);
		}
		// Should the store find the task's attempts used up, it dead-letters
		// it instead of retrying, and this is the reason that applies then.
		return TaskFailure.of(backOff(policy, failedRuns + 1), FailureReason.RETRIES_EXHAUSTED, failure);
	}

	/**
	 * The back-off before retry number {@code retry} (1 for the first retry). When the
	 * policy's back-off has run out, its last delay is repeated: the task's stored max
	 * attempts decides when to stop.
	 * @param policy the policy
	 * @param retry the retry number
	 * @return the delay
	 */
	static Duration backOff(RetryPolicy policy, int retry) {
		BackOffExecution execution = policy.getBackOff().start();
		long delay = 0;
		for (int i = 0; i < Math.min(retry, MAX_BACK_OFF_STEPS); i++) {
			long next = execution.nextBackOff();
			if (next == BackOffExecution.STOP) {
				break;
			}
			delay = next;
		}
		return Duration.ofMillis(Math.max(0, delay));
	}

	/**
	 * How many retries a policy allows, by running its back-off until it stops.
	 * @param policy the policy
	 * @return the retries, at most 999
	 */
	static int maxRetries(RetryPolicy policy) {
		BackOffExecution execution = policy.getBackOff().start();
		int retries = 0;
		while (retries < MAX_BACK_OFF_STEPS - 1 && execution.nextBackOff() != BackOffExecution.STOP) {
			retries++;
		}
		return retries;
	}

}

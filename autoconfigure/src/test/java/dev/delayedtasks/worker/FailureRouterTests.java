package dev.delayedtasks.worker;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.store.TaskFailure;
import org.junit.jupiter.api.Test;

import org.springframework.core.retry.RetryPolicy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a failed run is routed: retried with the policy's back-off, or dead-lettered.
 */
class FailureRouterTests {

	private final RetryPolicy policy = RetryPolicy.builder()
		.maxRetries(3)
		.delay(Duration.ofMillis(100))
		.multiplier(2)
		.jitter(Duration.ZERO)
		.build();

	@Test
	void retryableFailureIsRetriedWithTheBackOffOfItsRetryNumber() {
		FailureRouter router = new FailureRouter(List.of());
		IllegalStateException failure = new IllegalStateException("boom");
		assertThat(router.route(failure, 0, this.policy).retryDelay()).isEqualTo(Duration.ofMillis(100));
		assertThat(router.route(failure, 1, this.policy).retryDelay()).isEqualTo(Duration.ofMillis(200));
		assertThat(router.route(failure, 2, this.policy).retryDelay()).isEqualTo(Duration.ofMillis(400));
		TaskFailure recorded = router.route(failure, 0, this.policy);
		assertThat(recorded.exceptionType()).isEqualTo(IllegalStateException.class.getName());
		assertThat(recorded.message()).isEqualTo("boom");
	}

	@Test
	void aRetryCarriesRetriesExhaustedAsTheReasonForWhenTheStoreFindsTheAttemptsUsedUp() {
		TaskFailure failure = new FailureRouter(List.of()).route(new IllegalStateException("boom"), 0, this.policy);
		assertThat(failure.retryDelay()).isNotNull();
		assertThat(failure.deadReason()).isEqualTo(FailureReason.RETRIES_EXHAUSTED);
	}

	@Test
	void backOffPastThePolicysRetriesRepeatsItsLastDelaySoTheStoredMaxAttemptsDecides() {
		FailureRouter router = new FailureRouter(List.of());
		assertThat(router.route(new IllegalStateException(), 5, this.policy).retryDelay())
			.isEqualTo(Duration.ofMillis(400));
	}

	@Test
	void nonRetryableTaskExceptionIsDeadLetteredAtOnce() {
		TaskFailure failure = new FailureRouter(List.of()).route(new NonRetryableTaskException("no"), 0, this.policy);
		assertThat(failure.retryDelay()).isNull();
		assertThat(failure.deadReason()).isEqualTo(FailureReason.NON_RETRYABLE);
	}

	@Test
	void configuredTypesAndTheirSubclassesAreDeadLetteredAtOnce() {
		FailureRouter router = new FailureRouter(List.of(IllegalArgumentException.class));
		assertThat(router.route(new NumberFormatException("x"), 0, this.policy).retryDelay()).isNull();
		assertThat(router.route(new IllegalStateException("x"), 0, this.policy).retryDelay()).isNotNull();
	}

	@Test
	void failuresThePolicyDoesNotRetryAreDeadLetteredAtOnce() {
		RetryPolicy onlyIo = RetryPolicy.builder().includes(UncheckedIOException.class).build();
		FailureRouter router = new FailureRouter(List.of());
		assertThat(router.route(new IllegalStateException("x"), 0, onlyIo).retryDelay()).isNull();
		assertThat(router.route(new UncheckedIOException(new java.io.IOException("x")), 0, onlyIo).retryDelay())
			.isNotNull();
	}

	@Test
	void maxRetriesOfAPolicyIsHowOftenItsBackOffRuns() {
		assertThat(FailureRouter.maxRetries(this.policy)).isEqualTo(3);
		assertThat(FailureRouter.maxRetries(RetryPolicy.builder().maxRetries(0).build())).isZero();
	}

	@Test
	void longMessagesAreTruncated() {
		TaskFailure failure = new FailureRouter(List.of()).route(new IllegalStateException("x".repeat(2000)), 0,
				this.policy);
		assertThat(failure.message()).hasSize(TaskFailure.MAX_MESSAGE_LENGTH);
	}

}

package dev.delayedtasks.internal.worker;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.NonRetryableTaskException;
import dev.delayedtasks.autoconfigure.DelayedTasksProperties;
import dev.delayedtasks.internal.store.TaskFailure;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.core.retry.RetryPolicy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a failed run is routed: retried with the policy's back-off, or dead-lettered, and
 * which failures the policies built from {@code delayed-tasks.retry.*} and
 * {@code delayed-tasks.queues.
 *
<q>.retry.*} retry.
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
		FailureRouter router = new FailureRouter();
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
		TaskFailure failure = new FailureRouter().route(new IllegalStateException("boom"), 0, this.policy);
		assertThat(failure.retryDelay()).isNotNull();
		assertThat(failure.deadReason()).isEqualTo(FailureReason.RETRIES_EXHAUSTED);
	}

	@Test
	void backOffPastThePolicysRetriesRepeatsItsLastDelaySoTheStoredMaxAttemptsDecides() {
		FailureRouter router = new FailureRouter();
		assertThat(router.route(new IllegalStateException(), 5, this.policy).retryDelay())
			.isEqualTo(Duration.ofMillis(400));
	}

	@Test
	void nonRetryableTaskExceptionIsDeadLetteredAtOnce() {
		TaskFailure failure = new FailureRouter().route(new NonRetryableTaskException("no"), 0, this.policy);
		assertThat(failure.retryDelay()).isNull();
		assertThat(failure.deadReason()).isEqualTo(FailureReason.NON_RETRYABLE);
	}

	@Test
	void excludedTypesTheirSubclassesAndFailuresCausedByThemAreDeadLetteredAtOnce() {
		RetryPolicy policy = retry(
				Map.of("delayed-tasks.retry.exception-excludes", "java.lang.IllegalArgumentException"))
			.toRetryPolicy();
		FailureRouter router = new FailureRouter();
		TaskFailure excluded = router.route(new NumberFormatException("x"), 0, policy);
		assertThat(excluded.retryDelay()).isNull();
		assertThat(excluded.deadReason()).isEqualTo(FailureReason.NON_RETRYABLE);
		assertThat(router.route(new IllegalStateException("wrapped", new NumberFormatException("x")), 0, policy)
			.retryDelay()).isNull();
		assertThat(router.route(new IllegalStateException("x"), 0, policy).retryDelay()).isNotNull();
	}

	@Test
	void withIncludesOnlyTheIncludedTypesAreRetriedAndExcludesWinOverThem() {
		RetryPolicy policy = retry(Map.of("delayed-tasks.retry.exception-includes", "java.io.IOException",
				"delayed-tasks.retry.exception-excludes", "java.io.FileNotFoundException"))
			.toRetryPolicy();
		FailureRouter router = new FailureRouter();
		assertThat(router.route(new IOException("x"), 0, policy).retryDelay()).isNotNull();
		assertThat(router.route(new UncheckedIOException(new IOException("x")), 0, policy).retryDelay())
			.as("caused by an included type")
			.isNotNull();
		assertThat(router.route(new FileNotFoundException("x"), 0, policy).retryDelay()).isNull();
		TaskFailure notIncluded = router.route(new IllegalStateException("x"), 0, policy);
		assertThat(notIncluded.retryDelay()).isNull();
		assertThat(notIncluded.deadReason()).isEqualTo(FailureReason.NON_RETRYABLE);
	}

	@Test
	void nonRetryableTaskExceptionIsDeadLetteredAtOnceEvenWhenItsSupertypesAreIncluded() {
		RetryPolicy policy = retry(Map.of("delayed-tasks.retry.exception-includes", "java.lang.RuntimeException"))
			.toRetryPolicy();
		assertThat(new FailureRouter().route(new NonRetryableTaskException("no"), 0, policy).retryDelay()).isNull();
	}

	@Test
	void aQueueOverridesTheGlobalIncludesAndExcludesAndKeepsTheOtherGlobalValues() {
		DelayedTasksProperties properties = bind(Map.of("delayed-tasks.retry.exception-excludes",
				"java.lang.IllegalArgumentException", "delayed-tasks.retry.delay", "250ms",
				"delayed-tasks.retry.jitter", "0s", "delayed-tasks.queues.lenient.retry.exception-excludes", "",
				"delayed-tasks.queues.strict.retry.exception-includes", "java.io.IOException"));
		FailureRouter router = new FailureRouter();
		IllegalArgumentException invalid = new IllegalArgumentException("x");
		IllegalStateException state = new IllegalStateException("x");
		RetryPolicy global = properties.retry("other").toRetryPolicy();
		assertThat(router.route(invalid, 0, global).retryDelay()).isNull();
		assertThat(router.route(state, 0, global).retryDelay()).isEqualTo(Duration.ofMillis(250));
		RetryPolicy lenient = properties.retry("lenient").toRetryPolicy();
		assertThat(router.route(invalid, 0, lenient).retryDelay()).isEqualTo(Duration.ofMillis(250));
		RetryPolicy strict = properties.retry("strict").toRetryPolicy();
		assertThat(router.route(state, 0, strict).retryDelay()).isNull();
		assertThat(router.route(invalid, 0, strict).retryDelay()).as("still excluded globally").isNull();
		assertThat(router.route(new IOException("x"), 0, strict).retryDelay()).isEqualTo(Duration.ofMillis(250));
	}

	@Test
	void aZeroDelayRetriesAtOnceWhateverTheJitter() {
		// Spring's back-off divides the jitter by the delay: with the default jitter, a
		// zero delay threw ArithmeticException on every failure.
		FailureRouter router = new FailureRouter();
		IllegalStateException failure = new IllegalStateException("x");
		RetryPolicy global = retry(Map.of("delayed-tasks.retry.delay", "0s")).toRetryPolicy();
		assertThat(router.route(failure, 0, global).retryDelay()).isEqualTo(Duration.ZERO);
		assertThat(router.route(failure, 2, global).retryDelay()).isEqualTo(Duration.ZERO);
		RetryPolicy queue = bind(Map.of("delayed-tasks.queues.fast.retry.delay", "0s")).retry("fast").toRetryPolicy();
		assertThat(router.route(failure, 1, queue).retryDelay()).isEqualTo(Duration.ZERO);
	}

	@Test
	void failuresThePolicyDoesNotRetryAreDeadLetteredAtOnce() {
		RetryPolicy onlyIo = RetryPolicy.builder().includes(UncheckedIOException.class).build();
		FailureRouter router = new FailureRouter();
		assertThat(router.route(new IllegalStateException("x"), 0, onlyIo).retryDelay()).isNull();
		assertThat(router.route(new UncheckedIOException(new IOException("x")), 0, onlyIo).retryDelay()).isNotNull();
	}

	@Test
	void maxRetriesOfAPolicyIsHowOftenItsBackOffRuns() {
		assertThat(FailureRouter.maxRetries(this.policy)).isEqualTo(3);
		assertThat(FailureRouter.maxRetries(RetryPolicy.builder().maxRetries(0).build())).isZero();
	}

	@Test
	void longMessagesAreTruncated() {
		TaskFailure failure = new FailureRouter().route(new IllegalStateException("x".repeat(2000)), 0, this.policy);
		assertThat(failure.message()).hasSize(TaskFailure.MAX_MESSAGE_LENGTH);
	}

	private static DelayedTasksProperties.Retry retry(Map<String, String> properties) {
		return bind(properties).retry();
	}

	private static DelayedTasksProperties bind(Map<String, String> properties) {
		return new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate("delayed-tasks",
				DelayedTasksProperties.class);
	}

}

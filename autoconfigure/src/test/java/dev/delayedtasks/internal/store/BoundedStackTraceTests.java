package dev.delayedtasks.internal.store;

import java.io.IOException;
import java.time.Duration;

import dev.delayedtasks.FailureReason;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link BoundedStackTrace} and {@link TaskFailure#of}: Java's layout, bounded, with
 * exception types and frames only.
 */
class BoundedStackTraceTests {

	@Test
	void showsTypesAndFramesLikeJavaButNoMessages() {
		IllegalStateException top = failure(new IllegalStateException("secret top"), "Top", 3);
		IllegalArgumentException cause = failure(new IllegalArgumentException("secret cause"), "Cause", 2);
		top.initCause(cause);
		top.addSuppressed(failure(new UnsupportedOperationException("secret suppressed"), "Closer", 1));
		assertThat(BoundedStackTrace.of(top)).isEqualTo("""
				java.lang.IllegalStateException
				\tat com.example.Top.m0(Top.java:1)
				\tat com.example.Top.m1(Top.java:2)
				\tat com.example.Top.m2(Top.java:3)
				\tSuppressed: java.lang.UnsupportedOperationException
				\t\tat com.example.Closer.m0(Closer.java:1)
				Caused by: java.lang.IllegalArgumentException
				\tat com.example.Cause.m0(Cause.java:1)
				\tat com.example.Cause.m1(Cause.java:2)""");
	}

	@Test
	void keepsTwentyFramesPerThrowableAndElidesFramesInCommonWithTheEnclosingTrace() {
		IllegalStateException top = failure(new IllegalStateException(), "Deep", 30);
		IllegalArgumentException cause = new IllegalArgumentException();
		StackTraceElement[] frames = top.getStackTrace();
		StackTraceElement[] causeFrames = new StackTraceElement[frames.length - 26];
		System.arraycopy(frames, 26, causeFrames, 0, causeFrames.length);
		causeFrames[0] = new StackTraceElement("com.example.Other", "call", "Other.java", 7);
		cause.setStackTrace(causeFrames);
		top.initCause(cause);
		String trace = BoundedStackTrace.of(top);
		assertThat(trace.lines().filter((line) -> line.startsWith("\tat com.example.Deep"))).hasSize(20);
		assertThat(trace).contains("\tat com.example.Deep.m19(Deep.java:20)\n\t... 10 more\nCaused by: ")
			.doesNotContain("m20(")
			.endsWith("Caused by: java.lang.IllegalArgumentException\n\tat com.example.Other.call(Other.java:7)\n"
					+ "\t... 3 more");
	}

	@Test
	void stopsAtTheLengthLimitAndSurvivesACircularCause() {
		Exception first = failure(new IllegalStateException(), "A", 20);
		Exception second = failure(new IllegalArgumentException(), "B".repeat(200), 20);
		first.initCause(second);
		second.initCause(first);
		String trace = BoundedStackTrace.of(first);
		assertThat(trace).hasSizeLessThanOrEqualTo(BoundedStackTrace.MAX_LENGTH)
			.endsWith("\n" + BoundedStackTrace.TRUNCATED);
		Exception small = failure(new IllegalStateException(), "A", 1);
		Exception loop = failure(new IllegalArgumentException(), "B", 1);
		small.initCause(loop);
		loop.initCause(small);
		assertThat(BoundedStackTrace.of(small))
			.endsWith("Caused by: [CIRCULAR REFERENCE: java.lang.IllegalStateException]");
	}

	@Test
	void aGivenTraceIsNormalizedSoTheErrorRecordStaysReadable() {
		TaskFailure failure = new TaskFailure(null, FailureReason.NON_RETRYABLE, "E", "m",
				"E\r\n\tat a.B.c(B.java:1)\n\n\u001E\n\tat d.E.f(E.java:2)\n" + "x".repeat(5000));
		assertThat(failure.stackTrace()).startsWith("E\n\tat a.B.c(B.java:1)\n\tat d.E.f(E.java:2)\n")
			.doesNotContain("\n\n")
			.doesNotContain("\u001E")
			.endsWith(BoundedStackTrace.TRUNCATED)
			.hasSizeLessThanOrEqualTo(TaskFailure.MAX_STACK_TRACE_LENGTH);
		assertThat(new TaskFailure(null, FailureReason.NON_RETRYABLE, "E", "m").stackTrace()).isEmpty();
	}

	@Test
	void taskFailureOfBuildsTheTrace() {
		TaskFailure failure = TaskFailure.of(Duration.ofSeconds(1), FailureReason.NON_RETRYABLE,
				new IllegalStateException("boom", new IOException("secret")));
		assertThat(failure.stackTrace()).startsWith("java.lang.IllegalStateException\n\tat ")
			.contains(BoundedStackTraceTests.class.getName() + ".taskFailureOfBuildsTheTrace(")
			.contains("Caused by: java.io.IOException")
			.doesNotContain("boom")
			.doesNotContain("secret");
		assertThat(failure.message()).isEqualTo("boom");
	}

	private static <T extends Throwable> T failure(T throwable, String className, int frames) {
		StackTraceElement[] stack = new StackTraceElement[frames];
		for (int i = 0; i < frames; i++) {
			stack[i] = new StackTraceElement("com.example." + className, "m" + i, className + ".java", i + 1);
		}
		throwable.setStackTrace(stack);
		return throwable;
	}

}

package dev.delayedtasks;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.entry;

class TaskRequestTests {

	private static final Duration DELAY = Duration.ofMinutes(10);

	private static final Instant AT = Instant.parse("2030-01-01T09:00:00Z");

	@Test
	void ofSetsOnlyTheQueueAndThePayload() {
		TaskRequest request = TaskRequest.of("emails", "hello");
		assertThat(request).isEqualTo(new TaskRequest("emails", "hello", null, null, null, null, null, null, Map.of()));
		assertThat(request.headers()).isEmpty();
	}

	@Test
	void ofWithoutPayloadHasANullPayload() {
		TaskRequest request = TaskRequest.of("emails");
		assertThat(request.queue()).isEqualTo("emails");
		assertThat(request.payload()).isNull();
	}

	@Test
	void aNullPayloadIsRejectedWithAHint() {
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> TaskRequest.of("emails", null))
			.withMessage("Payload of a task for queue 'emails' is null: pass a value, or use TaskRequest.of(queue) "
					+ "for a task without payload");
	}

	@Test
	void everyOptionReturnsANewRequestAndLeavesTheOriginalUnchanged() {
		TaskRequest original = TaskRequest.of("emails", "hello");
		TaskRequest copy = new TaskRequest("emails", "hello", null, null, null, null, null, null, Map.of());
		assertThat(original.delay(DELAY)).isNotSameAs(original);
		assertThat(original.at(AT)).isNotSameAs(original);
		assertThat(original.id("order-42")).isNotSameAs(original);
		assertThat(original.id(TaskId.of("order-42"))).isNotSameAs(original);
		assertThat(original.uniqueKey("k")).isNotSameAs(original);
		assertThat(original.uniqueFor(Duration.ofHours(1))).isNotSameAs(original);
		assertThat(original.maxAttempts(5)).isNotSameAs(original);
		assertThat(original.header("a", "1")).isNotSameAs(original);
		assertThat(original).isEqualTo(copy);
		assertThat(original.headers()).isEmpty();
	}

	@Test
	void optionsAccumulate() {
		TaskRequest request = TaskRequest.of("emails", "hello")
			.delay(DELAY)
			.id("order-42-reminder")
			.uniqueKey("user-7-welcome")
			.uniqueFor(Duration.ofHours(1))
			.maxAttempts(5)
			.header("k", "v")
			.header("tenant", "acme");
		assertThat(request.queue()).isEqualTo("emails");
		assertThat(request.payload()).isEqualTo("hello");
		assertThat(request.delay()).isEqualTo(DELAY);
		assertThat(request.runAt()).isNull();
		assertThat(request.id()).isEqualTo(TaskId.of("order-42-reminder"));
		assertThat(request.uniqueKey()).isEqualTo("user-7-welcome");
		assertThat(request.uniqueFor()).isEqualTo(Duration.ofHours(1));
		assertThat(request.maxAttempts()).isEqualTo(5);
		assertThat(request.headers()).containsExactly(entry("k", "v"), entry("tenant", "acme"));
	}

	@Test
	void everyOptionKeepsTheOthers() {
		TaskRequest full = TaskRequest.of("emails", "hello")
			.at(AT)
			.id("i")
			.uniqueKey("u")
			.uniqueFor(Duration.ofSeconds(3))
			.maxAttempts(2)
			.header("h", "1");
		assertThat(full.id("j")).isEqualTo(new TaskRequest("emails", "hello", null, AT, TaskId.of("j"), "u",
				Duration.ofSeconds(3), 2, Map.of("h", "1")));
		assertThat(full.uniqueKey("w").uniqueKey()).isEqualTo("w");
		assertThat(full.uniqueKey("w").runAt()).isEqualTo(AT);
		assertThat(full.uniqueFor(Duration.ofSeconds(9))).isEqualTo(new TaskRequest("emails", "hello", null, AT,
				TaskId.of("i"), "u", Duration.ofSeconds(9), 2, Map.of("h", "1")));
		assertThat(full.maxAttempts(7)).isEqualTo(new TaskRequest("emails", "hello", null, AT, TaskId.of("i"), "u",
				Duration.ofSeconds(3), 7, Map.of("h", "1")));
		assertThat(full.header("g", "2")).isEqualTo(new TaskRequest("emails", "hello", null, AT, TaskId.of("i"), "u",
				Duration.ofSeconds(3), 2, Map.of("h", "1", "g", "2")));
	}

	@Test
	void delayAndAtAreExclusive() {
		TaskRequest delayed = TaskRequest.of("emails", "hello").delay(DELAY);
		TaskRequest atInstant = delayed.at(AT);
		assertThat(atInstant.runAt()).isEqualTo(AT);
		assertThat(atInstant.delay()).isNull();
		TaskRequest delayedAgain = atInstant.delay(Duration.ZERO);
		assertThat(delayedAgain.delay()).isEqualTo(Duration.ZERO);
		assertThat(delayedAgain.runAt()).isNull();
		assertThat(delayed.delay()).isEqualTo(DELAY);
		assertThat(delayed.runAt()).isNull();
	}

	@Test
	void theConstructorCopiesTheHeaders() {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("b", "2");
		headers.put("a", "1");
		TaskRequest request = new TaskRequest("emails", "hello", null, null, null, null, null, null, headers);
		headers.put("c", "3");
		headers.remove("b");
		assertThat(request.headers()).containsExactly(entry("b", "2"), entry("a", "1"));
	}

	@Test
	void theHeadersCannotBeChanged() {
		TaskRequest request = TaskRequest.of("emails", "hello").header("a", "1");
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> request.headers().put("b", "2"));
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(() -> request.headers().clear());
		assertThat(request.headers()).containsExactly(entry("a", "1"));
	}

	@Test
	void headerAddsToACopy() {
		TaskRequest first = TaskRequest.of("emails", "hello").header("a", "1");
		TaskRequest second = first.header("b", "2");
		TaskRequest replaced = second.header("a", "9");
		assertThat(first.headers()).containsExactly(entry("a", "1"));
		assertThat(second.headers()).containsExactly(entry("a", "1"), entry("b", "2"));
		assertThat(replaced.headers()).containsExactly(entry("a", "9"), entry("b", "2"));
		assertThat(second.headers()).containsExactly(entry("a", "1"), entry("b", "2"));
	}

	@Test
	void anInvalidCallerIdIsRejectedAtOnce() {
		TaskRequest request = TaskRequest.of("emails", "hello");
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> request.id("bad id"))
			.withMessageContaining("Task id 'bad id' is invalid");
	}

	@Test
	void afterCommitIsAnOptionThatDefaultsToTheApplicationsSetting() {
		TaskRequest request = TaskRequest.of("emails", "hello");
		assertThat(request.sending()).isEqualTo(TaskRequest.Sending.DEFAULT);
		assertThat(request.afterCommit().sending()).isEqualTo(TaskRequest.Sending.AFTER_COMMIT);
		assertThat(request.afterCommit(false).sending()).isEqualTo(TaskRequest.Sending.AT_ONCE);
		assertThat(request.afterCommit().delay(DELAY).id("i").header("a", "1").maxAttempts(2).sending())
			.as("kept by every other option")
			.isEqualTo(TaskRequest.Sending.AFTER_COMMIT);
		assertThat(new TaskRequest("emails", "hello", null, null, null, null, null, null, Map.of(), null).sending())
			.isEqualTo(TaskRequest.Sending.DEFAULT);
	}

	@Test
	void expiresAtAndExpireAfterAreExclusiveAndEveryOtherSettingKeepsThem() {
		TaskRequest at = TaskRequest.of("emails", "hello").expiresAt(AT);
		assertThat(at.expiresAt()).isEqualTo(AT);
		assertThat(at.expireAfter()).isNull();
		TaskRequest after = at.expireAfter(Duration.ofMinutes(5));
		assertThat(after.expiresAt()).isNull();
		assertThat(after.expireAfter()).isEqualTo(Duration.ofMinutes(5));
		assertThat(after.expiresAt(AT).expireAfter()).isNull();
		TaskRequest changed = after.delay(Duration.ofSeconds(1))
			.id("i")
			.uniqueKey("u")
			.uniqueFor(Duration.ofSeconds(3))
			.maxAttempts(2)
			.header("h", "1")
			.afterCommit();
		assertThat(changed.expireAfter()).isEqualTo(Duration.ofMinutes(5));
		assertThat(changed.at(AT).expireAfter()).isEqualTo(Duration.ofMinutes(5));
		assertThat(TaskRequest.of("emails", "hello").expiresAt()).isNull();
	}

}

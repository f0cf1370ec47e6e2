package dev.delayedtasks;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class NamesTests {

	private static final String QUEUE_RULE = "use 1-64 letters, digits, '.', '-', '_'";

	private static final String ID_RULE = "use 1-64 letters, digits, '.', '-', '_', ':'";

	@Test
	void everyAllowedCharacterIsAcceptedAndReturned() {
		String queue = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY0123456789.-_";
		assertThat(Names.checkQueue("Z")).isEqualTo("Z");
		assertThat(queue).hasSize(Names.MAX_LENGTH);
		assertThat(Names.checkQueue(queue)).isSameAs(queue);
		String id = "order-42:reminder_v1.2";
		assertThat(Names.checkTaskId(id)).isSameAs(id);
	}

	@Test
	void oneAndSixtyFourCharactersAreTheBounds() {
		assertThat(Names.MAX_LENGTH).isEqualTo(64);
		assertThat(Names.checkQueue("q")).isEqualTo("q");
		assertThat(Names.checkTaskId("x".repeat(64))).hasSize(64);
		assertThat(Names.checkQueue("x".repeat(64))).hasSize(64);
	}

	@Test
	void nullIsRejected() {
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkQueue(null))
			.withMessage("Queue name must not be null");
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkTaskId(null))
			.withMessage("Task id must not be null");
	}

	@Test
	void emptyIsRejectedWithItsLength() {
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkQueue(""))
			.withMessage("Queue name '' is invalid: it has 0 characters; " + QUEUE_RULE);
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkTaskId(""))
			.withMessage("Task id '' is invalid: it has 0 characters; " + ID_RULE);
	}

	@Test
	void tooLongIsRejectedWithItsLength() {
		String value = "y".repeat(65);
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkQueue(value))
			.withMessage("Queue name '" + value + "' is invalid: it has 65 characters; " + QUEUE_RULE);
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkTaskId(value))
			.withMessage("Task id '" + value + "' is invalid: it has 65 characters; " + ID_RULE);
	}

	@Test
	void aVeryLongValueIsAbbreviatedInTheMessage() {
		String value = "z".repeat(1000);
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkQueue(value))
			.withMessage("Queue name '" + "z".repeat(80) + "...' is invalid: it has 1000 characters; " + QUEUE_RULE);
	}

	@Test
	void aColonIsAllowedInIdsButNotInQueueNames() {
		assertThat(Names.checkTaskId("a:b")).isEqualTo("a:b");
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkQueue("a:b"))
			.withMessage("Queue name 'a:b' is invalid: character ':' at index 1 is not allowed; " + QUEUE_RULE);
	}

	@ParameterizedTest
	@ValueSource(strings = { "{", "}", " ", "*", "/", "é", "\u00a0", "#", "\"", "'" })
	void aCharacterOutsideTheRuleIsRejectedWithItsIndex(String character) {
		String queue = "ab" + character + "cd";
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkQueue(queue))
			.withMessage("Queue name '" + queue + "' is invalid: character '" + character
					+ "' at index 2 is not allowed; " + QUEUE_RULE);
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkTaskId(queue))
			.withMessage("Task id '" + queue + "' is invalid: character '" + character + "' at index 2 is not allowed; "
					+ ID_RULE);
	}

	@Test
	void bracesCannotChangeTheHashTag() {
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkQueue("emails}:0"))
			.withMessageContaining("character '}' at index 6 is not allowed");
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkTaskId("{other}"))
			.withMessageContaining("character '{' at index 0 is not allowed");
	}

	@Test
	void controlCharactersAreEscapedInTheMessage() {
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkQueue("a\nb\u0007"))
			.withMessage("Queue name 'a\\u000ab\\u0007' is invalid: character '\\u000a' at index 1 is not allowed; "
					+ QUEUE_RULE);
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkTaskId("\u0000"))
			.withMessage("Task id '\\u0000' is invalid: character '\\u0000' at index 0 is not allowed; " + ID_RULE);
	}

	@Test
	void theFirstOffendingCharacterIsReported() {
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkQueue("ok x{y"))
			.withMessageContaining("character ' ' at index 2");
	}

	@Test
	void lengthIsCheckedBeforeCharacters() {
		String value = "{".repeat(65);
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkQueue(value))
			.withMessageContaining("it has 65 characters");
	}

	@Test
	void aKeyPrefixFollowsTheIdRule() {
		assertThat(Names.checkKeyPrefix("dt")).isEqualTo("dt");
		assertThat(Names.checkKeyPrefix("app:dt-2.v1_x")).isEqualTo("app:dt-2.v1_x");
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkKeyPrefix(""))
			.withMessage("Key prefix '' is invalid: it has 0 characters; " + ID_RULE);
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkKeyPrefix(null))
			.withMessage("Key prefix must not be null");
	}

	@ParameterizedTest
	@ValueSource(strings = { "{", "}", "{}", " ", "*", "\n", "\u0000" })
	void aKeyPrefixCannotCarryAHashTagWhitespaceOrControlCharacters(String characters) {
		String prefix = "dt" + characters;
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> Names.checkKeyPrefix(prefix))
			.withMessageStartingWith("Key prefix '")
			.withMessageContaining("at index 2 is not allowed; " + ID_RULE);
	}

	@Test
	void theExceptionIsADelayedTaskException() {
		assertThatExceptionOfType(DelayedTaskException.class).isThrownBy(() -> Names.checkQueue(""));
	}

}

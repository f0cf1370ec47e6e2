package dev.delayedtasks;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class TaskIdTests {

	private static final String DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

	@Test
	void aGeneratedIdHasFourteenUrlSafeCharacters() {
		for (int i = 0; i < 1000; i++) {
			String value = TaskId.generate().value();
			assertThat(value).hasSize(14).matches("[0-9A-Za-z]{14}");
			assertThat(Names.checkTaskId(value)).isEqualTo(value);
		}
	}

	@Test
	void aGeneratedIdStartsWithItsCreationMillisecondInBase62() {
		long before = System.currentTimeMillis();
		String value = TaskId.generate().value();
		long after = System.currentTimeMillis();
		long millis = 0;
		for (char c : value.substring(0, 8).toCharArray()) {
			millis = millis * 62 + DIGITS.indexOf(c);
		}
		assertThat(millis).isBetween(before, after);
	}

	@Test
	void generatedIdsSortByCreationTimeAcrossMilliseconds() throws InterruptedException {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			ids.add(TaskId.generate().value());
			long now = System.currentTimeMillis();
			while (System.currentTimeMillis() == now) {
				Thread.sleep(0, 100_000);
			}
		}
		List<String> sorted = new ArrayList<>(ids);
		sorted.sort(null);
		assertThat(sorted).containsExactlyElementsOf(ids);
		for (int i = 1; i < ids.size(); i++) {
			assertThat(ids.get(i - 1).compareTo(ids.get(i))).isNegative();
			assertThat(ids.get(i - 1).substring(0, 8).compareTo(ids.get(i).substring(0, 8))).isNegative();
		}
	}

	@Test
	void generatedIdsAreDistinct() {
		Set<String> ids = new HashSet<>();
		for (int i = 0; i < 1000; i++) {
			ids.add(TaskId.generate().value());
		}
		assertThat(ids).hasSize(1000);
	}

	@Test
	void theRandomPartVaries() {
		Set<String> suffixes = new HashSet<>();
		for (int i = 0; i < 100; i++) {
			suffixes.add(TaskId.generate().value().substring(8));
		}
		assertThat(suffixes).hasSizeGreaterThan(90);
	}

	@Test
	void aCallerSuppliedIdIsKeptAsItIs() {
		TaskId id = TaskId.of("order-42:reminder");
		assertThat(id.value()).isEqualTo("order-42:reminder");
		assertThat(id).hasToString("order-42:reminder");
		assertThat(id).isEqualTo(new TaskId("order-42:reminder")).hasSameHashCodeAs(TaskId.of("order-42:reminder"));
	}

	@Test
	void anInvalidIdIsRejectedByTheNameRules() {
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> TaskId.of("a b"))
			.withMessageStartingWith("Task id 'a b' is invalid: character ' ' at index 1 is not allowed");
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> new TaskId(""))
			.withMessageStartingWith("Task id '' is invalid");
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> TaskId.of(null))
			.withMessage("Task id must not be null");
		assertThatExceptionOfType(InvalidTaskRequestException.class).isThrownBy(() -> TaskId.of("x".repeat(65)));
	}

	@Test
	void jsonIsAPlainStringInRecordsThatHoldAnId() {
		JsonMapper mapper = JsonMapper.shared();
		TaskId id = TaskId.of("order-42-reminder");
		assertThat(mapper.writeValueAsString(id)).isEqualTo("\"order-42-reminder\"");
		assertThat(mapper.writeValueAsString(new ScheduleResult(id, ScheduleResult.Outcome.CREATED, Instant.EPOCH)))
			.startsWith("{\"id\":\"order-42-reminder\",");
		assertThat(mapper.writeValueAsString(
				new DeadLetter(id, "emails", FailureReason.NON_RETRYABLE.value(), "E", "m", 1, Instant.EPOCH)))
			.startsWith("{\"id\":\"order-42-reminder\",");
	}

	@Test
	void jsonReadsBackFromAStringAndFromTheObjectShapeOfEarlierBuilds() {
		JsonMapper mapper = JsonMapper.shared();
		assertThat(mapper.readValue("\"order-42\"", TaskId.class)).isEqualTo(TaskId.of("order-42"));
		// A payload stored before ids were written as strings holds {"value":"..."}.
		assertThat(mapper.readValue("{\"value\":\"order-42\"}", TaskId.class)).isEqualTo(TaskId.of("order-42"));
		assertThat(mapper.readValue("{\"next\":\"a\",\"previous\":{\"value\":\"b\"}}", Chain.class))
			.isEqualTo(new Chain(TaskId.of("a"), TaskId.of("b")));
	}

	@Test
	void jsonThatIsNoValidIdIsRefusedWithTheIdRule() {
		JsonMapper mapper = JsonMapper.shared();
		assertThatExceptionOfType(JacksonException.class)
			.isThrownBy(() -> mapper.readValue("\"bad id!\"", TaskId.class))
			.withMessageContaining("Task id 'bad id!' is invalid");
		assertThatExceptionOfType(JacksonException.class).isThrownBy(() -> mapper.readValue("42", TaskId.class));
	}

	record Chain(TaskId next, TaskId previous) {

	}

}

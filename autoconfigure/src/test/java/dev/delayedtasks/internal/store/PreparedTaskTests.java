package dev.delayedtasks.internal.store;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What a producer may not send: the library's own header names, and the ids of recurring
 * occurrences, which would stand in for a schedule's tick.
 */
class PreparedTaskTests {

	private final PayloadCodec codec = new PayloadCodec(JsonMapper.shared(), DataSize.ofKilobytes(64));

	private PreparedTask prepare(TaskRequest request) {
		return PreparedTask.of(request, this.codec, (queue) -> 3);
	}

	@Test
	void theRecurringHeaderIsReservedForTheLibrary() {
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> prepare(TaskRequest.of("reports", "x").header("dt-recurring", "nightly")))
			.withMessageContaining("Header 'dt-recurring' for queue 'reports' is reserved");
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> prepare(TaskRequest.of("reports", "x").header("dt-anything", "v")))
			.withMessageContaining("header names starting with 'dt-' belong to delayed-tasks");
		assertThat(prepare(TaskRequest.of("reports", "x").header("tenant", "dt-1")).envelope())
			.contains("\"tenant\":\"dt-1\"");
	}

	@Test
	void theIdOfARecurringOccurrenceIsRefused() {
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> prepare(TaskRequest.of("reports", "x").id("nightly:1795759977000")))
			.withMessageContaining("Task id 'nightly:1795759977000' for queue 'reports' is reserved")
			.withMessageContaining("'nightly-1795759977000'");
		assertThat(prepare(TaskRequest.of("reports", "x").id("order:A-17")).id().value()).isEqualTo("order:A-17");
		assertThat(prepare(TaskRequest.of("reports", "x").id("order:42")).id().value()).isEqualTo("order:42");
		assertThat(prepare(TaskRequest.of("reports", "x").id("a:b:1795759977000")).id().value())
			.isEqualTo("a:b:1795759977000");
	}

}

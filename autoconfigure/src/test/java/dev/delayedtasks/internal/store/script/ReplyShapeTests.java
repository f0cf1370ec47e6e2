package dev.delayedtasks.internal.store.script;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link ReplyShape} reads every script's {@code Reply:} entry and rejects replies that
 * differ from it, so that {@link ScriptRepliesIntegrationTests} can fail.
 */
class ReplyShapeTests {

	@ParameterizedTest
	@EnumSource(Script.class)
	void everyScriptsReplyEntryParses(Script script) {
		assertThat(ReplyShape.parse(LuaFile.load(script).reply()).alternatives()).isPositive();
	}

	@Test
	void fixedFieldsAndCodesAfterTheGroup() {
		ReplyShape fail = ReplyShape.parse("{now, code, due ms or -1}; code: 'T' retry scheduled (due) | 'D' dead");
		assertThat(fail.mismatches(List.of(1000L, "T", 2000L), -1)).isEmpty();
		assertThat(fail.mismatches(List.of(1000L, "D", -1L), -1)).isEmpty();
		assertThat(fail.mismatches(List.of(1000L, "X", -1L), -1)).singleElement()
			.asString()
			.contains("not one of [T, D]");
		assertThat(fail.mismatches(List.of(1000L, "T", -2L), -1)).isNotEmpty();
		assertThat(fail.mismatches(List.of(1000L, "T"), -1)).singleElement().asString().contains("2 elements, not 3");
		assertThat(fail.mismatches(List.of(1000L, "T", "2000"), -1)).singleElement()
			.asString()
			.contains("not an integer");
	}

	@Test
	void fieldsPerItemAndTheirCount() {
		ReplyShape claim = ReplyShape.parse("{now, more (0/1), itemCount, then per item 3 fields: id, a, u or ''}");
		assertThat(claim.mismatches(List.of(1000L, 0L, 0L), -1)).isEmpty();
		assertThat(claim.mismatches(List.of(1000L, 1L, 2L, "t1", 1L, "", "t2", 2L, "d"), -1)).isEmpty();
		assertThat(claim.mismatches(List.of(1000L, 1L, 1L, "t1", 1L, "", "t2", 2L, "d"), -1)).singleElement()
			.asString()
			.contains("itemCount 1 but 2 items follow");
		assertThat(claim.mismatches(List.of(1000L, 2L, 0L), -1)).singleElement().asString().contains("not 0 or 1");
		assertThat(claim.mismatches(List.of(1000L, 0L, 1L, "t1", 1L), -1)).singleElement()
			.asString()
			.contains("5 elements, not 3 + n * 3");
		assertThat(claim.mismatches(List.of(1000L, 0L, 1L, "", 1L, ""), -1)).singleElement()
			.asString()
			.contains("not text");
	}

	@Test
	void oneCodePerItemAndTheItemsSent() {
		ReplyShape ack = ReplyShape
			.parse("{now, then per item a code: 'O' done | 'S' stale (token mismatch, say) | 'G' gone}");
		assertThat(ack.mismatches(List.of(1000L, "O", "S", "G"), 3)).isEmpty();
		assertThat(ack.mismatches(List.of(1000L, "O", "S"), 3)).singleElement()
			.asString()
			.contains("2 items, not the 3 sent");
	}

	@Test
	void oneOfSeveralAlternatives() {
		ReplyShape enqueue = ReplyShape
			.parse("{now, 'LAYOUT', storedVersion} when it differs; else {now, then per item: code ('C' created |"
					+ " 'E' existing), id (the id), due ms (or -1)}");
		assertThat(enqueue.alternatives()).isEqualTo(2);
		assertThat(enqueue.mismatches(List.of(1000L, "LAYOUT", "0"), 1)).isEmpty();
		assertThat(enqueue.mismatches(List.of(1000L, "C", "t1", 2000L), 1)).isEmpty();
		assertThat(enqueue.mismatches(List.of(1000L, "LATER", "0"), 1)).hasSize(2);
	}

	@Test
	void anEntryOfAnUnknownFormIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> ReplyShape.parse("now, code"));
		assertThatIllegalArgumentException().isThrownBy(() -> ReplyShape.parse("{now, then for each task: id}"));
		assertThatIllegalArgumentException().isThrownBy(() -> ReplyShape.parse("{now, code}"));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> ReplyShape.parse("{now, then per item 3 fields: id, token}"));
	}

}

package dev.delayedtasks.internal.store;

import java.util.List;

import dev.delayedtasks.internal.store.script.LuaFile;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.ScriptClock;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every script reads its clock through the {@code now} include: on the test clock, the
 * offset that delayed-tasks-test writes ({@link LayoutVersion#TEST_CLOCK_FIELD} of the
 * partition's {@code meta} hash) moves every script's "now" alike, new scripts included;
 * an application's scripts never read it.
 */
class TestClockIncludeTests {

	private static final List<String> PARTITION_KEYS = List.of("sched", "ready", "lease", "dead", "wake", "tick",
			"timer", "stats", "meta", "handover", "r:<sid>");

	@ParameterizedTest
	@EnumSource(Script.class)
	void noScriptOfAnApplicationReadsATestClockOffset(Script script) {
		String source = StoreScripts.source(script);
		assertThat(source).as(script.fileName())
			.contains("redis.call('TIME')")
			.doesNotContain("'meta', '" + LayoutVersion.TEST_CLOCK_FIELD + "'")
			.doesNotContain("now = now + ");
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void everyScriptOnTheTestClockAddsThePartitionsOffsetToRedisTime(Script script) {
		String source = StoreScripts.source(script, ScriptClock.TEST);
		assertThat(source).isNotEqualTo(StoreScripts.source(script));
		assertThat(source).as(script.fileName())
			.contains("local tag = KEYS[1] and string.find(KEYS[1], '}:', 1, true)")
			.contains("redis.call('HGET', string.sub(KEYS[1], 1, tag + 1) .. 'meta', '" + LayoutVersion.TEST_CLOCK_FIELD
					+ "')");
		// The offset is found from KEYS[1]: it must be a key of the partition.
		LuaFile file = LuaFile.load(script);
		assertThat(file.fixedKeyNames()).as("keys of %s", script.fileName()).isNotEmpty();
		assertThat(PARTITION_KEYS).as("first key of %s", script.fileName()).contains(file.fixedKeyNames().get(0));
		int time = source.indexOf("redis.call('TIME')");
		int offset = source.indexOf("now = now + ");
		assertThat(offset).as("offset after TIME in %s", script.fileName()).isGreaterThan(time);
	}

}

package dev.delayedtasks.testing;

import dev.delayedtasks.internal.store.script.ScriptClock;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scripts of delayed-tasks-test read the queue's clock through the store's own
 * {@code now} include, the one every store script uses, and follow the store's script
 * rules.
 */
class TestScriptsTests {

	@ParameterizedTest
	@ValueSource(strings = { "testing/advanceTime.lua", "testing/idle.lua" })
	void readTheClockThroughTheStoresIncludeOnceAndReplicateCommandsFirst(String script) {
		String source = StoreScripts.source(script, ScriptClock.TEST);
		assertThat(source).startsWith("-- ");
		assertThat(source.lines().filter((line) -> !line.startsWith("--")).findFirst())
			.hasValue("redis.replicate_commands()");
		assertThat(source.split("'TIME'", -1)).hasSize(2);
		assertThat(source).contains("redis.call('HGET', string.sub(KEYS[1], 1, tag + 1) .. 'meta', 'o')")
			.doesNotContain("@include")
			.doesNotContain("math.random");
	}

}

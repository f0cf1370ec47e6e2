package dev.delayedtasks.internal.store.script;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link FunctionLibrary} wraps every script in a function of a library whose name and
 * function names carry a hash of the content, replaces the one Lua call a function cannot
 * make, and refuses constructs it cannot wrap.
 */
class FunctionLibraryTests {

	private static final Pattern NAME = Pattern.compile("delayedtasks_[0-9a-f]{12}");

	private final FunctionLibrary library = new FunctionLibrary();

	@Test
	void startsWithTheShebangThatNamesTheLibraryByItsContentHash() {
		assertThat(this.library.name()).matches(NAME);
		assertThat(this.library.text()).startsWith("#!lua name=" + this.library.name() + "\n");
		assertThat(new FunctionLibrary().text()).as("the same scripts give the same library")
			.isEqualTo(this.library.text());
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void registersOneFunctionPerScriptNamedWithTheHashAndWrappingTheInlinedScript(Script script) {
		String hash = this.library.name().substring("delayedtasks_".length());
		String function = this.library.functionName(script);
		assertThat(function).isEqualTo("dt_" + hash + "_" + script.fileName().replace(".lua", ""));
		String header = "redis.register_function{function_name = '" + function + "', flags = {"
				+ FunctionLibrary.flags(script) + "}, callback = function(KEYS, ARGV)\n";
		assertThat(this.library.text()).contains(header);
		String body = FunctionLibrary.functionBody(script.fileName(), StoreScripts.source(script));
		assertThat(this.library.text()).contains(header + body + "end}\n");
		assertThat(body).doesNotContain("\nredis.replicate_commands()");
	}

	@Test
	void onlyEnqueueIsRefusedWhileRedisIsOutOfMemoryTheOtherScriptsFreeIt() {
		for (Script script : Script.values()) {
			assertThat(FunctionLibrary.flags(script)).isEqualTo((script == Script.ENQUEUE) ? "" : "'allow-oom'");
		}
	}

	@Test
	void hasAPingFunctionThatWritesNothingAndAnswersTheLibraryName() {
		assertThat(this.library.pingFunction())
			.isEqualTo(this.library.name().replace("delayedtasks_", "dt_") + "_ping");
		assertThat(this.library.text()).contains("redis.register_function{function_name = '"
				+ this.library.pingFunction() + "', flags = {'no-writes'}, callback = function()\n  return '"
				+ this.library.name() + "'\nend}\n");
	}

	@Test
	void replacesReplicateCommandsByACommentKeepingTheLineCount() {
		String body = FunctionLibrary.functionBody("x.lua", "-- x\n  redis.replicate_commands()\nreturn 1\n");
		assertThat(body).isEqualTo(
				"-- x\n-- redis.replicate_commands(): effects replication is always on in a function\nreturn 1\n");
	}

	@Test
	void endsTheBodyWithALineBreakSoThatALastCommentCannotSwallowTheEnd() {
		assertThat(FunctionLibrary.functionBody("x.lua", "return 1 -- done")).isEqualTo("return 1 -- done\n");
	}

	@Test
	void refusesAShebangAndOtherUsesOfReplicateCommands() {
		assertThatIllegalStateException().isThrownBy(() -> FunctionLibrary.functionBody("x.lua", "#!lua\nreturn 1\n"))
			.withMessageContaining("x.lua line 1 is a shebang");
		assertThatIllegalStateException()
			.isThrownBy(() -> FunctionLibrary.functionBody("y.lua", "local r = redis.replicate_commands()\n"))
			.withMessageContaining("y.lua line 1 uses replicate_commands");
	}

	@Test
	void aChangedScriptChangesTheHash() {
		ScriptLoader loader = new ScriptLoader(ScriptClock.REDIS);
		FunctionLibrary changed = new FunctionLibrary(
				(fileName) -> loader.load(fileName) + (fileName.equals("ack.lua") ? "-- changed\n" : ""));
		assertThat(changed.name()).matches(NAME).isNotEqualTo(this.library.name());
		assertThat(changed.functionName(Script.ENQUEUE)).isNotEqualTo(this.library.functionName(Script.ENQUEUE));
	}

	@Test
	void mainPrintsTheLibraryForRedisCli() {
		PrintStream out = System.out;
		ByteArrayOutputStream printed = new ByteArrayOutputStream();
		System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
		try {
			FunctionLibrary.main(new String[0]);
		}
		finally {
			System.setOut(out);
		}
		assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo(this.library.text());
	}

}

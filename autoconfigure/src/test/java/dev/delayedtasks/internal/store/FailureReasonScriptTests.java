package dev.delayedtasks.internal.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.internal.store.script.LuaFile;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.ScriptLoader;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Lua scripts and the Java code share one vocabulary of failure reasons: the reasons
 * a script writes into an error record are spelled once, in {@code includes/reasons.lua},
 * as values of {@link FailureReason}; every value of {@link FailureReason} is written by
 * a script, passed to {@code fail.lua} by the worker, or (for
 * {@link FailureReason#UNKNOWN}) what a dead letter without a record reads as. The
 * scripts are read as Redis gets them, through {@link ScriptLoader}, so reasons in
 * includes count.
 */
class FailureReasonScriptTests {

	/** Reasons the worker decides; they reach {@code fail.lua} in ARGV. */
	private static final Set<FailureReason> DECIDED_BY_THE_WORKER = EnumSet.of(FailureReason.NON_RETRYABLE,
			FailureReason.UNREADABLE_PAYLOAD);

	/** Never stored: what a dead letter without an error record reads as. */
	private static final Set<FailureReason> NEVER_STORED = EnumSet.of(FailureReason.UNKNOWN);

	private static final Pattern CONSTANTS = Pattern.compile("(?m)^local ([A-Z_, ]+) = ('[^\\n]+)$");

	private static final Pattern LITERAL = Pattern.compile("'((?:[^'\\\\\\n]|\\\\.)*)'|\"((?:[^\"\\\\\\n]|\\\\.)*)\"");

	/** A literal that starts an error record: a word, then a newline. */
	private static final Pattern RECORD_HEAD = Pattern.compile("^[a-z][a-z-]*\\\\n");

	/**
	 * Where a literal names a counter of the stats hash, which may share a reason's word.
	 */
	private static final Pattern COUNTER_CONTEXT = Pattern.compile("(?:HINCRBY', stats, |bump\\()$");

	@Test
	void theReasonsIncludeSpellsTheReasonsTheScriptsDecideAsFailureReasonValues() {
		Map<String, String> constants = reasonConstants();
		assertThat(constants).as("constants of includes/reasons.lua").isNotEmpty();
		constants.forEach((name, value) -> assertThat(FailureReason.fromValue(value))
			.as("FailureReason for '%s' (%s in includes/reasons.lua)", value, name)
			.hasValueSatisfying((reason) -> assertThat(reason.name()).isEqualTo(name)));
		Set<FailureReason> written = EnumSet.noneOf(FailureReason.class);
		constants.values().forEach((value) -> written.add(FailureReason.fromValue(value).orElseThrow()));
		Set<FailureReason> expected = EnumSet.allOf(FailureReason.class);
		expected.removeAll(DECIDED_BY_THE_WORKER);
		expected.removeAll(NEVER_STORED);
		assertThat(written).as("reasons the scripts write").isEqualTo(expected);
	}

	@Test
	void everyConstantOfTheReasonsIncludeIsUsedByAScript() {
		List<String> code = Arrays.stream(Script.values()).map(FailureReasonScriptTests::codeWithoutReasons).toList();
		for (String name : reasonConstants().keySet()) {
			assertThat(code).as("scripts that use %s", name)
				.anyMatch((text) -> Pattern.compile("\\b" + name + "\\b").matcher(text).find());
		}
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void scriptsSpellReasonsOnlyThroughTheReasonsInclude(Script script) {
		String code = codeWithoutReasons(script);
		Matcher literal = LITERAL.matcher(code);
		while (literal.find()) {
			String text = (literal.group(1) != null) ? literal.group(1) : literal.group(2);
			assertThat(RECORD_HEAD.matcher(text).find())
				.as("literal '%s' in %s starts an error record: start it with a constant of includes/reasons.lua", text,
						script.fileName())
				.isFalse();
			if (FailureReason.fromValue(text).isPresent()) {
				String before = code.substring(Math.max(0, literal.start() - 20), literal.start());
				assertThat(COUNTER_CONTEXT.matcher(before).find())
					.as("reason '%s' spelled as a literal in %s: use its constant of includes/reasons.lua", text,
							script.fileName())
					.isTrue();
			}
		}
	}

	@Test
	void theWorkerPassesOnlyItsOwnReasonsAndNeverOneTheStoreDecides() {
		// Guards the split above: the store decides exhaustion, max deliveries and
		// corruption from what it holds.
		assertThat(DECIDED_BY_THE_WORKER).allMatch(FailureReason::isDeadLetterReason)
			.doesNotContain(FailureReason.RETRIES_EXHAUSTED, FailureReason.MAX_DELIVERIES, FailureReason.CORRUPT);
	}

	@Test
	void valuesAreLowerCaseWordsJoinedByHyphensAndReadBack() {
		for (FailureReason reason : FailureReason.values()) {
			assertThat(reason.value()).matches("[a-z]+(-[a-z]+)*")
				.isEqualTo(reason.name().toLowerCase().replace('_', '-'));
			assertThat(FailureReason.fromValue(reason.value())).hasValue(reason);
		}
		assertThat(FailureReason.fromValue("canceled")).isEmpty();
		assertThat(FailureReason.FAILED.isDeadLetterReason()).isFalse();
	}

	private static Map<String, String> reasonConstants() {
		Matcher line = CONSTANTS.matcher(new LuaFile(reasonsInclude()).code);
		assertThat(line.find()).as("a 'local NAME, ... = 'value', ...' line in includes/reasons.lua").isTrue();
		List<String> names = Arrays.stream(line.group(1).split(",")).map(String::trim).toList();
		List<String> values = Arrays.stream(line.group(2).split(","))
			.map(String::trim)
			.map((value) -> value.substring(1, value.length() - 1))
			.toList();
		assertThat(values).as("values of %s", names).hasSameSizeAs(names);
		Map<String, String> constants = new LinkedHashMap<>();
		for (int i = 0; i < names.size(); i++) {
			constants.put(names.get(i), values.get(i));
		}
		return constants;
	}

	/** The script as Redis gets it, without comments and without the reasons include. */
	private static String codeWithoutReasons(Script script) {
		String inlined = StoreScripts.source(script).replace(reasonsInclude(), "");
		return new LuaFile(inlined).code;
	}

	private static String reasonsInclude() {
		String path = ScriptLoader.SCRIPTS + ScriptLoader.INCLUDES + "reasons.lua";
		try (InputStream in = FailureReasonScriptTests.class.getClassLoader().getResourceAsStream(path)) {
			assertThat(in).as(path).isNotNull();
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}

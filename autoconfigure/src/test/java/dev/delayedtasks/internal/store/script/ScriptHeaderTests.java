package dev.delayedtasks.internal.store.script;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.mockito.Mockito.atLeastOnce;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;

/**
 * Checks every Lua script's header and prologue against the rules of the script contract.
 * The header is read from the script's file; what the script does (commands, {@code KEYS}
 * indexes, {@code TIME}) from its text as sent to Redis, with its includes inlined.
 * {@link ScriptRepliesIntegrationTests} checks the keys the Java callers pass and the
 * replies the scripts give against each header, on a real Redis.
 */
class ScriptHeaderTests {

	private static final Pattern KEYS_LINE = Pattern.compile("^-- keys: fixed=(\\d+) per-item=(\\d+)$");

	private static final Pattern KEYS_TITLE = Pattern.compile("KEYS \\(fixed (\\d+), per item (\\d+)\\)");

	private static final Pattern TIME_CALL = Pattern.compile("redis\\.p?call\\(\\s*['\"]TIME['\"]");

	private static final Pattern LITERAL_KEY = Pattern.compile("KEYS\\[\\s*(\\d+)\\s*\\]");

	private static final Pattern ANY_KEY = Pattern.compile("KEYS\\[([^\\]]*)\\]");

	private static final Pattern ITEM_KEY = Pattern
		.compile("^\\s*(\\d+)\\s*\\+\\s*(?:(\\d+)\\s*\\*\\s*)?[a-z]\\w*\\s*$");

	private static final Pattern KEY_COUNT_CHECK = Pattern
		.compile("#KEYS\\s*==\\s*(\\d+)(\\s*\\+\\s*(?:(\\d+)\\s*\\*\\s*)?[a-z]\\w*)?");

	private static final Pattern BASE_ARGUMENT = Pattern.compile("^-- ARGV: 1 base\\b");

	private static final Pattern USES_BASE = Pattern.compile("\\bbase\\b");

	private static final Pattern BASE_FROM_FIRST_ARGUMENT = Pattern
		.compile("\\blocal base(?:\\s*,\\s*\\w+)*\\s*=\\s*ARGV\\[1\\]");

	@ParameterizedTest
	@EnumSource(Script.class)
	void theResourceExistsBesideTheLoader(Script script) {
		assertThat(StoreScripts.class.getResource(script.fileName())).as(script.fileName()).isNotNull();
		assertThat(script.fileName()).isEqualTo(script.name().toLowerCase() + ".lua");
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void theHeaderKeysLineMatchesTheEnum(Script script) {
		LuaFile file = LuaFile.load(script);
		List<Matcher> lines = file.header.stream().map(KEYS_LINE::matcher).filter(Matcher::matches).toList();
		assertThat(lines).as("'-- keys:' lines in the header of %s", script.fileName()).hasSize(1);
		assertThat(Integer.parseInt(lines.get(0).group(1))).as("fixed keys of %s", script.fileName())
			.isEqualTo(script.fixedKeys());
		assertThat(Integer.parseInt(lines.get(0).group(2))).as("keys per item of %s", script.fileName())
			.isEqualTo(script.keysPerItem());
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void theHeaderListsEachFixedKeyAndThePerItemKeys(Script script) {
		LuaFile file = LuaFile.load(script);
		List<Matcher> titles = file.header.stream().map(KEYS_TITLE::matcher).filter(Matcher::find).toList();
		assertThat(titles).as("'KEYS (fixed N, per item M)' in %s", script.fileName()).hasSize(1);
		assertThat(Integer.parseInt(titles.get(0).group(1))).isEqualTo(script.fixedKeys());
		assertThat(Integer.parseInt(titles.get(0).group(2))).isEqualTo(script.keysPerItem());
		assertThat(file.fixedKeyNames()).as("numbered keys in the header of %s", script.fileName())
			.hasSize(script.fixedKeys());
		assertThat(file.perItemKeyNames()).as("per-item keys in the header of %s", script.fileName())
			.hasSize(script.keysPerItem());
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void theFirstStatementReplicatesCommands(Script script) {
		LuaFile file = LuaFile.load(script);
		assertThat(file.header).as("header comment of %s", script.fileName()).isNotEmpty();
		assertThat(file.firstStatement()).as("first statement of %s", script.fileName())
			.isEqualTo("redis.replicate_commands()");
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void timeIsReadExactlyOnce(Script script) {
		String code = LuaFile.inlined(script).code;
		assertThat(count(TIME_CALL, code)).as("TIME calls in %s", script.fileName()).isEqualTo(1);
		assertThat(count(Pattern.compile("['\"]TIME['\"]"), code)).as("'TIME' literals in %s", script.fileName())
			.isEqualTo(1);
		assertThat(code).as(script.fileName())
			.contains("local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)");
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void noScriptUsesMathRandom(Script script) {
		LuaFile file = LuaFile.inlined(script);
		assertThat(file.code).as(script.fileName()).doesNotContain("math.random").doesNotContain("randomseed");
		assertThat(file.text).as(script.fileName()).doesNotContain("math.random(");
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void everyLiteralKeysIndexIsAFixedKey(Script script) {
		String code = LuaFile.inlined(script).code;
		Matcher literal = LITERAL_KEY.matcher(code);
		while (literal.find()) {
			assertThat(Integer.parseInt(literal.group(1))).as("%s in %s", literal.group(), script.fileName())
				.isBetween(1, script.fixedKeys());
		}
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void computedKeysIndicesFollowThePerItemStride(Script script) {
		String code = LuaFile.inlined(script).code;
		Matcher key = ANY_KEY.matcher(code);
		while (key.find()) {
			String index = key.group(1).trim();
			if (index.matches("\\d+")) {
				continue;
			}
			assertThat(script.keysPerItem())
				.as("%s in %s, a script without per-item keys", key.group(), script.fileName())
				.isPositive();
			Matcher item = ITEM_KEY.matcher(index);
			assertThat(item.matches())
				.as("%s in %s has the form KEYS[offset + stride * i]", key.group(), script.fileName())
				.isTrue();
			int stride = (item.group(2) != null) ? Integer.parseInt(item.group(2)) : 1;
			assertThat(stride).as("stride of %s in %s", key.group(), script.fileName()).isEqualTo(script.keysPerItem());
			assertThat(Integer.parseInt(item.group(1))).as("offset of %s in %s", key.group(), script.fileName())
				.isBetween(script.fixedKeys() + 1 - stride, script.fixedKeys() + stride);
		}
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void theScriptValidatesItsKeyCount(Script script) {
		String code = LuaFile.inlined(script).code;
		Matcher check = KEY_COUNT_CHECK.matcher(code);
		assertThat(check.find()).as("#KEYS check in %s", script.fileName()).isTrue();
		assertThat(Integer.parseInt(check.group(1))).as("#KEYS check in %s", script.fileName())
			.isEqualTo(script.fixedKeys());
		if (script.keysPerItem() == 0) {
			assertThat(check.group(2)).as("#KEYS check in %s", script.fileName()).isNull();
		}
		else {
			assertThat(check.group(2)).as("#KEYS check in %s", script.fileName()).isNotNull();
			int stride = (check.group(3) != null) ? Integer.parseInt(check.group(3)) : 1;
			assertThat(stride).as("#KEYS check in %s", script.fileName()).isEqualTo(script.keysPerItem());
		}
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void aScriptThatDerivesKeysTakesTheKeyBaseAsItsFirstArgumentAndSaysWhy(Script script) {
		LuaFile file = LuaFile.load(script);
		String code = LuaFile.inlined(script).code;
		boolean usesBase = USES_BASE.matcher(code).find();
		assertThat(file.header.stream().anyMatch((line) -> BASE_ARGUMENT.matcher(line).find()))
			.as("'-- ARGV: 1 base' in the header of %s", script.fileName())
			.isEqualTo(usesBase);
		assertThat(file.header.stream().anyMatch((line) -> line.startsWith("--   derived from ARGV base")))
			.as("'--   derived from ARGV base' line in the header of %s", script.fileName())
			.isEqualTo(usesBase);
		if (usesBase) {
			assertThat(count(BASE_FROM_FIRST_ARGUMENT, code)).as("'local base = ARGV[1]' in %s", script.fileName())
				.isEqualTo(1);
			assertThat(count(Pattern.compile("\\blocal base\\b"), code))
				.as("declarations of base in %s", script.fileName())
				.isEqualTo(1);
		}
	}

	@Test
	void acceptsKeyCountAllowsTheFixedKeysPlusWholeItems() {
		assertThat(Script.CLAIM.acceptsKeyCount(8)).isTrue();
		assertThat(Script.CLAIM.acceptsKeyCount(7)).isFalse();
		assertThat(Script.CLAIM.acceptsKeyCount(9)).isFalse();
		assertThat(Script.ENQUEUE.acceptsKeyCount(6)).isTrue();
		assertThat(Script.ENQUEUE.acceptsKeyCount(9)).isTrue();
		assertThat(Script.ENQUEUE.acceptsKeyCount(6 + 3 * 500)).isTrue();
		assertThat(Script.ENQUEUE.acceptsKeyCount(8)).isFalse();
		assertThat(Script.ENQUEUE.acceptsKeyCount(10)).isFalse();
		assertThat(Script.ENQUEUE.acceptsKeyCount(5)).isFalse();
		assertThat(Script.EXTEND.acceptsKeyCount(1)).isTrue();
		assertThat(Script.EXTEND.acceptsKeyCount(2)).isTrue();
		assertThat(Script.EXTEND.acceptsKeyCount(0)).isFalse();
		assertThat(Script.ACK.acceptsKeyCount(2 + 4 * 3)).isTrue();
		assertThat(Script.ACK.acceptsKeyCount(2 + 4 * 3 - 1)).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void aWrongKeyCountIsRejectedBeforeAnyRedisCall(Script script) {
		RedisConnectionFactory connectionFactory = mock(RedisConnectionFactory.class);
		StoreScripts scripts = new StoreScripts(new StringRedisTemplate(connectionFactory));
		clearInvocations(connectionFactory);
		List<Integer> wrongCounts = new ArrayList<>(List.of(0, script.fixedKeys() - 1));
		if (script.keysPerItem() != 1) {
			wrongCounts.add(script.fixedKeys() + 1);
		}
		if (script.keysPerItem() > 1) {
			wrongCounts.add(script.fixedKeys() + script.keysPerItem() - 1);
			wrongCounts.add(script.fixedKeys() + 2 * script.keysPerItem() + 1);
		}
		for (int wrong : wrongCounts) {
			List<String> keys = IntStream.range(0, wrong).mapToObj((i) -> "dt:{q:0}:k" + i).toList();
			assertThatIllegalArgumentException().isThrownBy(() -> scripts.run(script, keys, List.of("1"), "q", null))
				.withMessage(script.fileName() + " takes " + script.fixedKeys() + " + n*" + script.keysPerItem()
						+ " keys, not " + wrong);
		}
		verifyNoInteractions(connectionFactory);
	}

	@Test
	void aRightKeyCountGoesToRedis() {
		RedisConnectionFactory connectionFactory = mock(RedisConnectionFactory.class);
		StoreScripts scripts = new StoreScripts(new StringRedisTemplate(connectionFactory));
		clearInvocations(connectionFactory);
		List<String> keys = IntStream.range(0, Script.CLAIM.fixedKeys()).mapToObj((i) -> "dt:{q:0}:k" + i).toList();
		Throwable failure = catchThrowable(() -> scripts.run(Script.CLAIM, keys, List.of("1"), "q", null));
		assertThat(failure).isNotInstanceOf(IllegalArgumentException.class);
		verify(connectionFactory, atLeastOnce()).getConnection();
	}

	private static int count(Pattern pattern, String text) {
		Matcher matcher = pattern.matcher(text);
		int count = 0;
		while (matcher.find()) {
			count++;
		}
		return count;
	}

}

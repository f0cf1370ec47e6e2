package dev.delayedtasks.store;

import io.micrometer.observation.ObservationRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyList;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.atLeastOnce;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;

/**
 * Checks every Lua script's header and prologue against the rules of the script contract,
 * and that the Java callers pass the keys each header declares, in its order. The header
 * is read from the script's file; what the script does (commands, {@code KEYS} indexes,
 * {@code TIME}) from its text as sent to Redis, with its includes inlined.
 */
class ScriptHeaderTests {

	private static final Pattern KEYS_LINE = Pattern.compile("^-- keys: fixed=(\\d+) per-item=(\\d+)$");

	private static final Pattern KEYS_TITLE = Pattern.compile("KEYS \\(fixed (\\d+), per item (\\d+)\\)");

	private static final Pattern NUMBERED_KEY = Pattern.compile("^--\\s+(\\d+)\\s+(\\S+)\\s");

	private static final Pattern PER_ITEM_KEY = Pattern.compile("\\b([a-z]+):<[a-z]+>");

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

	@Test
	void theJavaCallersPassTheKeysEachHeaderDeclaresInItsOrder() {
		StoreSettings settings = StoreFixture.settings("dt", Duration.ofSeconds(2), Duration.ofMillis(500));
		RecordingScripts recording = new RecordingScripts();
		RedisTaskStore store = new RedisTaskStore(recording.scripts, settings);
		RedisDelayedTaskScheduler scheduler = new RedisDelayedTaskScheduler(recording.scripts, settings,
				new PayloadCodec(JsonMapper.shared(), DataSize.ofKilobytes(64)), mock(QueueIndex.class), (queue) -> 3,
				2, new DelayedTaskListener() {
				}, ObservationRegistry.NOOP, null);
		RedisDeadLetters deadLetters = new RedisDeadLetters(recording.scripts, settings);
		Lease plain = new Lease(TaskId.of("t1"), "n:1", null);
		Lease unique = new Lease(TaskId.of("t2"), "n:2", "digest0123456789");

		store.claim("q", 3, "nonce");
		store.promote("q", "owner", Duration.ofSeconds(3));
		store.resignTimer("q", "owner");
		store.ack("q", List.of(plain));
		store.ack("q", List.of(plain, unique, plain));
		store.fail("q", plain, new TaskFailure(Duration.ofSeconds(1), FailureReason.NON_RETRYABLE, "E", "m"));
		store.fail("q", unique, new TaskFailure(null, FailureReason.NON_RETRYABLE, "E", "m"));
		store.extend("q", List.of(plain));
		store.extend("q", List.of(plain, unique));
		store.release("q", List.of(unique));
		store.release("q", List.of(plain, unique));
		store.recover("q", List.of("n.1", "n.2"));
		scheduler.submit(TaskRequest.of("q", "p"));
		scheduler.submit(TaskRequest.of("q", "p").uniqueFor(Duration.ofSeconds(5)).id("given"));
		scheduler.scheduleAll(List.of(TaskRequest.of("q", 1), TaskRequest.of("r", 2), TaskRequest.of("q", 3),
				TaskRequest.of("q", 4).uniqueKey("k").uniqueFor(Duration.ofMinutes(1))));
		scheduler.cancel("q", TaskId.of("t1"));
		scheduler.reschedule("q", TaskId.of("t1"), Duration.ofSeconds(1));
		scheduler.reschedule("q", TaskId.of("t1"), Instant.now());
		deadLetters.redrive("q", TaskId.of("t1"));
		deadLetters.redriveAll("q");
		deadLetters.purge("q");
		deadLetters.trim("q");
		new RedisQueueStats(recording.scripts, settings).read("q");

		Set<Script> called = EnumSet.noneOf(Script.class);
		for (RecordingScripts.Call call : recording.calls) {
			called.add(call.script());
			checkKeys(call, settings.keys(call.queue()));
		}
		assertThat(called).as("scripts called from Java").containsAll(EnumSet.allOf(Script.class));
		List<Integer> enqueueKeyCounts = recording.calls.stream()
			.filter((call) -> call.script() == Script.ENQUEUE)
			.map((call) -> call.keys().size())
			.toList();
		assertThat(enqueueKeyCounts).as("enqueue batches of at most 2 items, per queue")
			.containsExactly(6 + 3, 6 + 3, 6 + 3 * 2, 6 + 3, 6 + 3);
	}

	private static void checkKeys(RecordingScripts.Call call, PartitionKeys keys) {
		Script script = call.script();
		String where = script.fileName() + " called with " + call.keys();
		assertThat(script.acceptsKeyCount(call.keys().size())).as(where).isTrue();
		for (String key : call.keys()) {
			assertThat(key).as("key of one partition in %s", where).startsWith(keys.base());
		}
		LuaFile file = LuaFile.load(script);
		if (file.header.stream().anyMatch((line) -> BASE_ARGUMENT.matcher(line).find())) {
			assertThat(call.args().get(0)).as("ARGV[1] (base) of %s", where).isEqualTo(keys.base());
		}
		List<String> fixed = file.fixedKeyNames();
		List<String> perItem = file.perItemKeyNames();
		for (int i = 0; i < call.keys().size(); i++) {
			String expected = (i < script.fixedKeys()) ? fixed.get(i)
					: perItem.get((i - script.fixedKeys()) % script.keysPerItem());
			assertThat(shape(call.keys().get(i).substring(keys.base().length())))
				.as("key %d of %s (header says %s)", i + 1, where, expected)
				.isEqualTo(shape(expected));
		}
	}

	/**
	 * The shape of a key suffix: {@code t:abc} and the header's {@code t:<id>} are both
	 * {@code t:*}.
	 */
	private static String shape(String suffix) {
		int colon = suffix.indexOf(':');
		return (colon < 0) ? suffix : suffix.substring(0, colon) + ":*";
	}

	private static int count(Pattern pattern, String text) {
		Matcher matcher = pattern.matcher(text);
		int count = 0;
		while (matcher.find()) {
			count++;
		}
		return count;
	}

	/**
	 * A script file: its leading comment block, and its code with comments removed.
	 */
	static final class LuaFile {

		final String text;

		final List<String> header;

		final String code;

		LuaFile(String text) {
			this.text = text;
			List<String> lines = text.lines().toList();
			List<String> headerLines = new ArrayList<>();
			for (String line : lines) {
				if (!line.startsWith("--")) {
					break;
				}
				headerLines.add(line);
			}
			this.header = headerLines;
			this.code = stripComments(text);
		}

		/**
		 * The script as sent to Redis, with its includes inlined.
		 */
		static LuaFile inlined(Script script) {
			return new LuaFile(StoreScripts.source(script));
		}

		/**
		 * The script's file, as written (its header is only there).
		 */
		static LuaFile load(Script script) {
			try (InputStream in = StoreScripts.class.getResourceAsStream(script.fileName())) {
				assertThat(in).as(script.fileName()).isNotNull();
				return new LuaFile(new String(in.readAllBytes(), StandardCharsets.UTF_8));
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		String firstStatement() {
			return this.text.lines()
				.skip(this.header.size())
				.map(String::trim)
				.filter((line) -> !line.isEmpty() && !line.startsWith("--"))
				.findFirst()
				.orElse("");
		}

		/**
		 * The numbered fixed keys of the header ({@code --   3 lease  ZSET ...}), checked
		 * to be numbered 1, 2, 3 ... in order.
		 */
		List<String> fixedKeyNames() {
			List<String> names = new ArrayList<>();
			boolean inKeys = false;
			for (String line : this.header) {
				if (KEYS_TITLE.matcher(line).find()) {
					inKeys = true;
					continue;
				}
				if (inKeys && (line.startsWith("-- ARGV") || line.startsWith("--   per item")
						|| line.startsWith("--   derived"))) {
					break;
				}
				Matcher numbered = NUMBERED_KEY.matcher(line);
				if (inKeys && numbered.find()) {
					assertThat(Integer.parseInt(numbered.group(1))).as(line).isEqualTo(names.size() + 1);
					names.add(numbered.group(2));
				}
			}
			return names;
		}

		/**
		 * The per-item keys of the header ({@code --   per item: t:<id> HASH task, ...}).
		 */
		List<String> perItemKeyNames() {
			List<String> names = new ArrayList<>();
			for (String line : this.header) {
				if (line.startsWith("--   per item:")) {
					Matcher key = PER_ITEM_KEY.matcher(line);
					while (key.find()) {
						names.add(key.group());
					}
				}
			}
			return names;
		}

		private static String stripComments(String text) {
			StringBuilder out = new StringBuilder();
			int i = 0;
			char quote = 0;
			while (i < text.length()) {
				char c = text.charAt(i);
				if (quote != 0) {
					out.append(c);
					if (c == '\\' && i + 1 < text.length()) {
						out.append(text.charAt(i + 1));
						i += 2;
						continue;
					}
					if (c == quote) {
						quote = 0;
					}
					i++;
				}
				else if (c == '\'' || c == '"') {
					quote = c;
					out.append(c);
					i++;
				}
				else if (text.startsWith("--[[", i)) {
					int end = text.indexOf("]]", i + 4);
					i = (end < 0) ? text.length() : end + 2;
				}
				else if (text.startsWith("--", i)) {
					int end = text.indexOf('\n', i);
					i = (end < 0) ? text.length() : end;
				}
				else {
					out.append(c);
					i++;
				}
			}
			return out.toString();
		}

	}

	/**
	 * A mocked {@link StoreScripts} that records each call and answers with a well-formed
	 * reply.
	 */
	static final class RecordingScripts {

		final List<Call> calls = new ArrayList<>();

		final StoreScripts scripts = mock(StoreScripts.class);

		RecordingScripts() {
			given(this.scripts.run(any(), anyList(), anyList(), anyString(), any())).willAnswer((invocation) -> {
				Script script = invocation.getArgument(0);
				List<String> keys = List.copyOf(invocation.getArgument(1));
				List<String> args = List.copyOf(invocation.getArgument(2));
				this.calls.add(new Call(script, keys, args, invocation.getArgument(3)));
				return reply(script, args);
			});
		}

		private static List<Object> reply(Script script, List<String> args) {
			List<Object> reply = new ArrayList<>(List.of(1000L));
			switch (script) {
				case ENQUEUE -> {
					int count = Integer.parseInt(args.get(1));
					for (int i = 0; i < count; i++) {
						reply.addAll(List.of("C", args.get(4 + 6 * i), 1000L));
					}
				}
				case CLAIM -> reply.addAll(List.of(-1L, -1L, 0L, 0L, 0L));
				case PROMOTE -> reply.addAll(List.of(1L, 3000L, -1L, -1L, 0L));
				case ACK -> repeat(reply, "O", Integer.parseInt(args.get(1)));
				case EXTEND, RELEASE -> repeat(reply, "O", Integer.parseInt(args.get(1)));
				case FAIL -> reply.addAll(List.of("T", 2000L));
				case CANCEL -> reply.add("C");
				case RESCHEDULE -> reply.addAll(List.of("O", 2000L));
				case REDRIVE -> reply.addAll(List.of(0L, 0L, 0L));
				case RECOVER -> reply.addAll(List.of(0L, 0L));
				case PURGE -> reply.addAll(List.of(0L, 0L));
				case STATS -> reply.addAll(List.of(0L, 0L, 0L, 0L, -1L, -1L, -2L, "", 0L, "1"));
			}
			return reply;
		}

		private static void repeat(List<Object> reply, String code, int count) {
			for (int i = 0; i < count; i++) {
				reply.add(code);
			}
		}

		record Call(Script script, List<String> keys, List<String> args, String queue) {
		}

	}

}

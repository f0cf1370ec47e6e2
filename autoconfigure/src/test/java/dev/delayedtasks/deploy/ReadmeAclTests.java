package dev.delayedtasks.deploy;

import java.io.IOException;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The documented ACL lines (docs/deployment.md) grant exactly what the library sends:
 * every command its Lua scripts call (scripts run with the user's permissions) and every
 * command its Java code sends, and nothing else; {@code EVALSHA} and {@code EVAL} in the
 * line for the default mode, {@code FCALL} alone in the line for Functions mode.
 */
class ReadmeAclTests {

	/**
	 * Commands sent from Java rather than from a script.
	 */
	private static final Set<String> JAVA_COMMANDS = Set.of(
			// BlockingConnections: idle dispatchers and the timer's tick reader
			"blpop",
			// QueueIndex
			"sadd", "smembers", "sismember", "srem",
			// LayoutVersion, RedisQueueControl (pause, resume, isPaused)
			"hget", "hset", "hdel", "rpush",
			// RedisDeadLetters (list, count), RedisDelayedTaskScheduler (find)
			"zrevrange", "zcard", "get", "hgetall",
			// RedisInstanceRegistry: reports (SET with PX, ZADD, ZRANGE, MGET, ZREM),
			// leave
			// (DEL), reads (ZREVRANGE, ZCARD)
			"mget", "set", "zadd", "zrange", "zrem", "del",
			// RedisQueueBrowser: ready pages (the scripts send them too)
			"llen", "lrange",
			// EvictionPolicyCheck: INFO memory only
			"info|memory",
			// OutcomeTracker: its own channel, once a task is tracked
			"subscribe", "unsubscribe");

	/**
	 * How scripts are run: EvalScriptCall, EVALSHA and EVAL when the script cache was
	 * lost, and SCRIPT LOAD of every script by the warm start (its only use).
	 */
	private static final Set<String> EVAL_COMMANDS = Set.of("evalsha", "eval", "script|load");

	/**
	 * FunctionScriptCall and the startup check of the library (its ping function); the
	 * warm start loads nothing in this mode.
	 */
	private static final Set<String> FUNCTIONS_COMMANDS = Set.of("fcall");

	/**
	 * A call of a Redis command: {@code redis.call}, {@code redis.pcall} or the scripts'
	 * {@code pread} helper, but not the helper passing its own arguments on
	 * ({@code (...)}).
	 */
	private static final Pattern CALL = Pattern.compile("(?:redis\\.p?call|pread)\\((?!\\.\\.\\.\\))");

	private static final Pattern NAMED_CALL = Pattern.compile("(?:redis\\.p?call|pread)\\(\\s*'([A-Za-z]+)'");

	@Test
	void grantsExactlyTheCommandsOfTheScriptsAndTheJavaCode() throws IOException {
		Set<String> sent = new TreeSet<>(JAVA_COMMANDS);
		sent.addAll(scriptCommands());
		sent.addAll(EVAL_COMMANDS);
		assertThat(ReadmeAcl.read().commands()).isEqualTo(sent);
	}

	@Test
	void theFunctionsLineGrantsFcallInsteadOfEvalAndOtherwiseTheSameCommands() throws IOException {
		Set<String> sent = new TreeSet<>(JAVA_COMMANDS);
		sent.addAll(scriptCommands());
		sent.addAll(FUNCTIONS_COMMANDS);
		assertThat(ReadmeAcl.readFunctions().commands()).isEqualTo(sent)
			.doesNotContain("eval", "evalsha", "script|load");
	}

	@Test
	void confinesTheUserToTheKeyPrefixWithoutChannelsOrOtherCommands() {
		assertThat(ReadmeAcl.read().line())
			.startsWith("user delayed-tasks on >change-me ~dt:{* ~dt:queues ~dt:recurring resetchannels -@all +");
		assertThat(ReadmeAcl.readFunctions().line())
			.startsWith("user delayed-tasks on >change-me ~dt:{* ~dt:queues ~dt:recurring resetchannels -@all +");
	}

	@Test
	void grantsOnlyTheMemorySectionOfInfo() {
		assertThat(ReadmeAcl.read().commands()).contains("info|memory").doesNotContain("info");
		assertThat(ReadmeAcl.readFunctions().commands()).contains("info|memory").doesNotContain("info");
	}

	private static Set<String> scriptCommands() throws IOException {
		Set<String> commands = new TreeSet<>();
		for (Script script : Script.values()) {
			// What Redis runs: the shared code the script includes is inlined.
			String source = StoreScripts.source(script);
			int named = 0;
			Matcher matcher = NAMED_CALL.matcher(source);
			while (matcher.find()) {
				commands.add(matcher.group(1).toLowerCase(Locale.ROOT));
				named++;
			}
			// A command name computed at run time would escape this list.
			assertThat(CALL.matcher(source).results().count())
				.as("redis.call with a literal name in %s", script.fileName())
				.isEqualTo(named);
		}
		assertThat(commands).as("commands found in the scripts").contains("time", "hincrby", "zadd");
		return commands;
	}

}

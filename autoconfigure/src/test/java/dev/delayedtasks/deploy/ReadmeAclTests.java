package dev.delayedtasks.deploy;

import java.io.IOException;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.delayedtasks.store.Script;
import dev.delayedtasks.store.StoreScripts;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's ACL line grants exactly what the library sends: every command its Lua
 * scripts call (scripts run with the user's permissions) and every command its Java code
 * sends, and nothing else.
 */
class ReadmeAclTests {

	/**
	 * Commands sent from Java rather than from a script.
	 */
	private static final Set<String> JAVA_COMMANDS = Set.of(
			// StoreScripts, through Spring Data Redis: EVALSHA, EVAL when the script
			// cache was lost
			"evalsha", "eval",
			// BlockingConnections: idle dispatchers and the timer's tick reader
			"blpop",
			// QueueIndex
			"sadd", "smembers",
			// LayoutVersion, RedisQueueControl (pause, resume, isPaused)
			"hget", "hset", "hdel", "rpush",
			// RedisDeadLetters (list, count), RedisDelayedTaskScheduler (find)
			"zrevrange", "zcard", "get", "hgetall",
			// EvictionPolicyCheck
			"info");

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
		assertThat(ReadmeAcl.read().commands()).isEqualTo(sent);
	}

	@Test
	void confinesTheUserToTheKeyPrefixWithoutChannelsOrOtherCommands() {
		assertThat(ReadmeAcl.read().line()).startsWith("user delayed-tasks on >change-me ~dt:* resetchannels -@all +");
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

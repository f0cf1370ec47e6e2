package dev.delayedtasks.internal.store.script;

import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import io.lettuce.core.RedisNoScriptException;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisScriptingCommands;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.Assert;

/**
 * Sends a script call as {@code EVALSHA} with keys and arguments as bytes on the
 * template's connection (a connection-level callback: none of the template's serializers
 * and script executor run), and as {@code EVAL} of the same text when the server has lost
 * its script cache (restart, failover, {@code SCRIPT FLUSH}). Each script is read once,
 * with the shared code it includes inlined by {@link ScriptLoader}; the SHA-1 that
 * {@code EVALSHA} names is that of the inlined text. Works on every Redis the library
 * supports; the Redis user needs {@code EVALSHA} and {@code EVAL}, which run any Lua, and
 * {@code SCRIPT LOAD} only for the warm start ({@link #warmUp}).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class EvalScriptCall implements ScriptCall {

	private final StringRedisTemplate redis;

	private final Map<Script, String> shas = new EnumMap<>(Script.class);

	private final Map<Script, byte[]> sources = new EnumMap<>(Script.class);

	/**
	 * Load every script from the classpath, with its includes inlined.
	 * @param redis a template on the connection factory delayed tasks uses
	 */
	public EvalScriptCall(StringRedisTemplate redis) {
		this(redis, ScriptClock.REDIS);
	}

	/**
	 * Load every script from the classpath, with its includes inlined.
	 * @param redis a template on the connection factory delayed tasks uses
	 * @param clock the clock the scripts read
	 */
	public EvalScriptCall(StringRedisTemplate redis, ScriptClock clock) {
		this.redis = redis;
		// Read once: a resource-backed script would re-check its file on every call.
		ScriptLoader loader = new ScriptLoader(clock);
		for (Script script : Script.values()) {
			String source = loader.load(script.fileName());
			this.shas.put(script, RedisScript.of(source).getSha1());
			this.sources.put(script, source.getBytes(StandardCharsets.UTF_8));
		}
	}

	@Override
	public List<Object> call(Script script, int keyCount, byte[][] keysAndArgs) {
		String sha = this.shas.get(script);
		byte[] source = this.sources.get(script);
		// Exposed: no proxy of the connection is made per call.
		List<Object> reply = this.redis.execute(
				(RedisCallback<List<Object>>) (connection) -> evalSha(connection, sha, source, keyCount, keysAndArgs),
				true);
		Assert.state(reply != null, () -> script.fileName() + " returned no reply");
		return reply;
	}

	private static List<Object> evalSha(RedisConnection connection, String sha, byte[] source, int keyCount,
			byte[][] keysAndArgs) {
		RedisScriptingCommands scripting = connection.scriptingCommands();
		try {
			return scripting.evalSha(sha, ReturnType.MULTI, keyCount, keysAndArgs);
		}
		catch (RuntimeException ex) {
			if (!isNoScript(ex)) {
				throw ex;
			}
			// Restart, failover or SCRIPT FLUSH: EVAL loads the script again.
			return scripting.eval(source, ReturnType.MULTI, keyCount, keysAndArgs);
		}
	}

	/**
	 * Whether Redis answered {@code NOSCRIPT}: it does not have the script in its cache.
	 * @param ex a failure of {@code EVALSHA}
	 * @return whether the script must be sent with {@code EVAL}
	 */
	static boolean isNoScript(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof RedisNoScriptException
					|| (cause.getMessage() != null && cause.getMessage().contains("NOSCRIPT"))) {
				return true;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return false;
	}

	/**
	 * Load every script into Redis's script cache ({@code SCRIPT LOAD}; on a Cluster, on
	 * every master), so that no first call is answered {@code NOSCRIPT}.
	 */
	@Override
	public void warmUp() {
		this.redis.execute((RedisCallback<Void>) (connection) -> {
			for (Script script : Script.values()) {
				connection.scriptingCommands().scriptLoad(this.sources.get(script));
			}
			return null;
		}, true);
	}

	/**
	 * The SHA-1 {@code EVALSHA} names a script by.
	 * @param script the script
	 * @return the hex digest of its text
	 */
	String sha(Script script) {
		return this.shas.get(script);
	}

	/**
	 * The text of a script as {@code EVAL} sends it.
	 * @param script the script
	 * @return the UTF-8 bytes (shared: do not change them)
	 */
	byte[] sourceBytes(Script script) {
		return this.sources.get(script);
	}

}

package dev.delayedtasks.internal.store.script;

import java.util.List;

import org.springframework.dao.DataAccessException;

/**
 * How one call of a Lua script is sent to Redis: {@link EvalScriptCall}
 * ({@code EVALSHA}/{@code EVAL}, any Redis) or {@link FunctionScriptCall} ({@code FCALL}
 * of the {@link FunctionLibrary}, Redis 7+). {@link StoreScripts#runEncoded} is the one
 * caller: it checks the keys, retries while a Cluster slot moves and turns failures into
 * errors that name the queue and the task, whichever way the call is sent. Keys and
 * arguments arrive encoded, and the reply leaves as Redis sent it, so the hot paths pay
 * for no conversion they do not need.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface ScriptCall {

	/**
	 * Run a script once.
	 * @param script the script
	 * @param keyCount how many of {@code keysAndArgs} are keys
	 * @param keysAndArgs the keys, then the arguments, as UTF-8 bytes
	 * @return its reply as Redis sent it: bulk strings as {@code byte[]}, integers as
	 * {@code Long}, nested arrays as lists and a Lua {@code false} as {@code null}
	 * @throws DataAccessException when Redis fails or refuses the call
	 */
	List<Object> call(Script script, int keyCount, byte[][] keysAndArgs);

	/**
	 * Prepare Redis at startup so that the first calls find what they need (the warm
	 * start). Nothing by default.
	 * @throws DataAccessException when Redis fails or refuses what is sent
	 */
	default void warmUp() {
	}

}

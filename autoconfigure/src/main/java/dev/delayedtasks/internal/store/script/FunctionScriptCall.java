package dev.delayedtasks.internal.store.script;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.ScriptOutputType;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisSystemException;

/**
 * Sends a script call as {@code FCALL} of the script's function in the
 * {@link FunctionLibrary} (Redis 7+), so the Redis user needs {@code FCALL}, not
 * {@code EVAL}. Lettuce routes the call by its first key, as it does {@code EVALSHA}.
 * <p>
 * A master that lacks the function (the library was never loaded there, {@code FUNCTION
 * FLUSH}, a failover to a replica that never had it) answers "Function not found". When
 * the application may load the library ({@code delayed-tasks.scripts.load-library}), it
 * loads it on every master and sends the call once more; otherwise the call fails with a
 * message naming the command that loads it.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class FunctionScriptCall implements ScriptCall {

	private final RedisMasters masters;

	private final FunctionLibraries libraries;

	private final boolean loadWhenMissing;

	/**
	 * Call the library's functions.
	 * @param masters the connection, for the call and for loading
	 * @param libraries the library and how it is loaded
	 * @param loadWhenMissing whether to load the library and retry once when a master
	 * lacks it
	 */
	public FunctionScriptCall(RedisMasters masters, FunctionLibraries libraries, boolean loadWhenMissing) {
		this.masters = masters;
		this.libraries = libraries;
		this.loadWhenMissing = loadWhenMissing;
	}

	@Override
	public List<Object> call(Script script, int keyCount, byte[][] keysAndArgs) {
		try {
			return fcall(script, keyCount, keysAndArgs);
		}
		catch (DataAccessException ex) {
			if (!FunctionLibraries.isMissing(ex)) {
				throw ex;
			}
			if (!this.loadWhenMissing) {
				throw missing(script, ex);
			}
			this.libraries.load();
			return fcall(script, keyCount, keysAndArgs);
		}
	}

	/**
	 * Run a script once without blocking the caller: {@code FCALL} on the shared native
	 * connection, with the same handling of a missing library as {@link #call} (the load
	 * and the one retry happen on Reactor's bounded elastic threads, as loading waits for
	 * every master). On a connection factory that does not share its native connection,
	 * the blocking call runs on those threads instead.
	 * @param script the script
	 * @param keyCount how many of {@code keysAndArgs} are keys
	 * @param keysAndArgs the keys, then the arguments
	 * @return the reply as {@link #call} gives it; fails with a
	 * {@link DataAccessException}
	 */
	Mono<List<Object>> callReactive(Script script, int keyCount, byte[][] keysAndArgs) {
		if (!this.masters.sendsWithoutWaiting()) {
			return Mono.fromCallable(() -> call(script, keyCount, keysAndArgs))
				.subscribeOn(Schedulers.boundedElastic());
		}
		Mono<List<Object>> fcall = Mono.defer(() -> Mono.fromFuture(fcallAsync(script, keyCount, keysAndArgs)));
		return fcall.onErrorResume(FunctionLibraries::isMissing, (ex) -> {
			if (!this.loadWhenMissing) {
				return Mono.error(missing(script, ex));
			}
			return Mono.fromRunnable(this.libraries::load).subscribeOn(Schedulers.boundedElastic()).then(fcall);
		});
	}

	private RedisSystemException missing(Script script, Throwable ex) {
		return new RedisSystemException(
				this.libraries.missingAdvice("Redis has no function " + this.libraries.library().functionName(script)),
				ex);
	}

	private List<Object> fcall(Script script, int keyCount, byte[][] keysAndArgs) {
		String function = this.libraries.library().functionName(script);
		byte[][] keys = Arrays.copyOfRange(keysAndArgs, 0, keyCount);
		byte[][] args = Arrays.copyOfRange(keysAndArgs, keyCount, keysAndArgs.length);
		return list(function, this.masters
			.onRoutedConnection((commands) -> commands.<Object>fcall(function, ScriptOutputType.MULTI, keys, args)));
	}

	private CompletableFuture<List<Object>> fcallAsync(Script script, int keyCount, byte[][] keysAndArgs) {
		String function = this.libraries.library().functionName(script);
		byte[][] keys = Arrays.copyOfRange(keysAndArgs, 0, keyCount);
		byte[][] args = Arrays.copyOfRange(keysAndArgs, keyCount, keysAndArgs.length);
		return this.masters
			.sendRouted((commands) -> commands.<Object>fcall(function, ScriptOutputType.MULTI, keys, args))
			.thenApply((reply) -> list(function, reply));
	}

	@SuppressWarnings("unchecked")
	private static List<Object> list(String function, @Nullable Object reply) {
		if (!(reply instanceof List<?> list)) {
			throw new RedisSystemException(function + " returned " + reply + " instead of an array", null);
		}
		return (List<Object>) list;
	}

}

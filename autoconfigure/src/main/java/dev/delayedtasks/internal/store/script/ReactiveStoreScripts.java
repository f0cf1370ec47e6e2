package dev.delayedtasks.internal.store.script;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.TaskStoreException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.ReactiveRedisConnection;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.ReactiveRedisCallback;
import org.springframework.data.redis.core.ReactiveRedisTemplate;
import org.springframework.data.redis.serializer.RedisSerializationContext;

/**
 * Runs the Lua scripts without blocking a thread: the same scripts, SHA-1s, mode and
 * error handling as {@link StoreScripts}. With {@code EVALSHA}, on the reactive
 * connection of the application's connection factory
 * ({@link ReactiveRedisTemplate#execute(ReactiveRedisCallback)}), falling back to
 * {@code EVAL} when Redis lost its script cache; in Functions mode, {@code FCALL} of the
 * library's function on Lettuce's shared connection, loading a missing library as
 * {@link FunctionScriptCall} does. A call refused while a Cluster slot moves or a master
 * fails over is retried after a delay that no thread sleeps through (Reactor's timer), as
 * {@link StoreScripts} does with its blocking retries. Failures become
 * {@link TaskStoreException}s with the same messages.
 * <p>
 * Replies arrive on a Redis I/O thread: what follows them must not block.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class ReactiveStoreScripts {

	private static final int CLUSTER_RETRIES = 8;

	private static final Duration CLUSTER_RETRY_DELAY = Duration.ofMillis(25);

	private final ReactiveRedisTemplate<byte[], byte[]> redis;

	private final StoreScripts scripts;

	/**
	 * Create the scripts.
	 * @param connectionFactory the reactive side of the connection factory delayed tasks
	 * uses
	 * @param scripts the blocking scripts, whose loaded texts and SHA-1s are shared
	 */
	public ReactiveStoreScripts(ReactiveRedisConnectionFactory connectionFactory, StoreScripts scripts) {
		this.redis = new ReactiveRedisTemplate<>(connectionFactory, RedisSerializationContext.byteArray(), true);
		this.scripts = scripts;
	}

	/**
	 * Run a script whose keys and arguments are already encoded.
	 * @param script the script
	 * @param keyCount how many of {@code keysAndArgs} are keys
	 * @param keysAndArgs the keys, then the arguments
	 * @param queue the queue, for error messages
	 * @param taskId the task being written, for error messages, or {@code null}
	 * @return the reply as Redis sent it (bulk strings as {@code byte[]}, integers as
	 * {@code Long}); fails with a {@link TaskStoreException}
	 */
	public Mono<List<Object>> runEncoded(Script script, int keyCount, byte[][] keysAndArgs, String queue,
			@Nullable String taskId) {
		Mono<List<Object>> call = send(script, keyCount, keysAndArgs);
		Retry retry = Retry.backoff(CLUSTER_RETRIES - 1, CLUSTER_RETRY_DELAY)
			.jitter(0)
			.filter((ex) -> script != Script.CLAIM && ex instanceof DataAccessException data
					&& StoreScripts.isTopologyChanging(data))
			.onRetryExhaustedThrow((spec, signal) -> signal.failure());
		return call.retryWhen(retry)
			.onErrorMap((ex) -> !(ex instanceof TaskStoreException),
					(ex) -> StoreScripts.failure(script, queue, taskId, dataAccess(ex)));
	}

	/**
	 * One call, sent as the blocking scripts send theirs: {@code EVALSHA} (and
	 * {@code EVAL}) on the reactive connection, or {@code FCALL} of the library's
	 * function with the same handling of a missing library. A {@link ScriptCall} of
	 * another kind runs on Reactor's bounded elastic threads.
	 * @param script the script
	 * @param keyCount how many of {@code keysAndArgs} are keys
	 * @param keysAndArgs the keys, then the arguments
	 * @return the reply as Redis sent it
	 */
	private Mono<List<Object>> send(Script script, int keyCount, byte[][] keysAndArgs) {
		ScriptCall scriptCall = this.scripts.call();
		if (scriptCall instanceof EvalScriptCall eval) {
			String sha = eval.sha(script);
			byte[] source = eval.sourceBytes(script);
			// A multi-bulk reply arrives as one element, the list.
			return this.redis.execute((connection) -> evalSha(connection, sha, source, keyCount, keysAndArgs), true)
				.collectList()
				.map((values) -> (values.size() == 1 && values.get(0) instanceof List<?> reply) ? fromBuffers(reply)
						: fromBuffers(values));
		}
		if (scriptCall instanceof FunctionScriptCall function) {
			return function.callReactive(script, keyCount, keysAndArgs);
		}
		return Mono.fromCallable(() -> scriptCall.call(script, keyCount, keysAndArgs))
			.subscribeOn(Schedulers.boundedElastic());
	}

	/**
	 * Run a script and decode its reply as {@link StoreScripts#run} does.
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments
	 * @param queue the queue, for error messages
	 * @param taskId the task, for error messages, or {@code null}
	 * @return the decoded reply
	 */
	public Mono<List<Object>> run(Script script, List<String> keys, List<String> args, String queue,
			@Nullable String taskId) {
		byte[][] keysAndArgs = new byte[keys.size() + args.size()][];
		int i = 0;
		for (String key : keys) {
			keysAndArgs[i++] = key.getBytes(StandardCharsets.UTF_8);
		}
		for (String arg : args) {
			keysAndArgs[i++] = arg.getBytes(StandardCharsets.UTF_8);
		}
		return runEncoded(script, keys.size(), keysAndArgs, queue, taskId).map(ScriptReplies::decode);
	}

	/**
	 * Read every field of a hash.
	 * @param key the key
	 * @return the fields, empty when the key does not exist
	 */
	public Mono<Map<String, String>> hashEntries(String key) {
		return this.redis.<byte[], byte[]>opsForHash()
			.entries(bytes(key))
			.collectMap((entry) -> text(entry.getKey()), (entry) -> text(entry.getValue()));
	}

	/**
	 * Read a string.
	 * @param key the key
	 * @return the value, empty when the key does not exist
	 */
	public Mono<String> get(String key) {
		return this.redis.opsForValue().get(bytes(key)).map(ReactiveStoreScripts::text);
	}

	/**
	 * Add a member to a set.
	 * @param key the key
	 * @param member the member
	 * @return completes when it is added
	 */
	public Mono<Void> addToSet(String key, String member) {
		return this.redis.opsForSet().add(bytes(key), bytes(member)).then();
	}

	private static Flux<Object> evalSha(ReactiveRedisConnection connection, String sha, byte[] source, int keyCount,
			byte[][] keysAndArgs) {
		ByteBuffer[] buffers = new ByteBuffer[keysAndArgs.length];
		for (int i = 0; i < keysAndArgs.length; i++) {
			buffers[i] = ByteBuffer.wrap(keysAndArgs[i]);
		}
		Flux<Object> evalSha = connection.scriptingCommands().evalSha(sha, ReturnType.MULTI, keyCount, buffers);
		// Restart, failover or SCRIPT FLUSH: EVAL loads the script again. The buffers
		// were not read by the failed call's encoding for good: rewind them.
		return evalSha.onErrorResume(EvalScriptCall::isNoScript, (ex) -> {
			for (ByteBuffer buffer : buffers) {
				buffer.rewind();
			}
			return connection.scriptingCommands().eval(ByteBuffer.wrap(source), ReturnType.MULTI, keyCount, buffers);
		});
	}

	private static List<Object> fromBuffers(List<?> values) {
		List<Object> converted = new ArrayList<>(values.size());
		for (Object value : values) {
			converted.add(fromBuffer(value));
		}
		return converted;
	}

	private static @Nullable Object fromBuffer(@Nullable Object value) {
		if (value instanceof ByteBuffer buffer) {
			byte[] bytes = new byte[buffer.remaining()];
			buffer.duplicate().get(bytes);
			return bytes;
		}
		if (value instanceof List<?> list) {
			return fromBuffers(list);
		}
		return value;
	}

	/**
	 * A failure of a reactive call in Spring's exception hierarchy, as blocking calls
	 * throw it.
	 * @param ex the failure
	 * @return the exception
	 */
	public static DataAccessException dataAccess(Throwable ex) {
		return (ex instanceof DataAccessException data) ? data
				: new RedisSystemException(String.valueOf(ex.getMessage()), ex);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

}

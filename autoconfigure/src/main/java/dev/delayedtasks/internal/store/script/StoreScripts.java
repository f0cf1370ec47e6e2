package dev.delayedtasks.internal.store.script;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskStoreException;
import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.Assert;

/**
 * Runs the Lua scripts on the application's Redis connection, the one place every script
 * call goes through. How a call is sent is a {@link ScriptCall}: {@code EVALSHA} of the
 * keys and arguments as bytes on the template's connection, with a fall back to
 * {@code EVAL} ({@link EvalScriptCall}, the default), or {@code FCALL} of the
 * {@link FunctionLibrary} ({@link FunctionScriptCall}). Either way a call is encoded once
 * ({@link #runEncoded}): the hot paths pre-encode their keys. A script refused while a
 * Redis Cluster slot moves or a master fails over is retried for a few seconds. Redis
 * failures become {@link TaskStoreException}s that say which operation on which queue
 * failed, and, when Redis's ACL refused it, what permission to grant.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class StoreScripts {

	private static final Pattern REDIRECT = Pattern.compile("\\b(MOVED|ASK) \\d+ ");

	/**
	 * Attempts while the master of a partition changes: waits of 25 ms doubling to 1.6 s.
	 */
	private static final int CLUSTER_RETRIES = 8;

	private static final Duration CLUSTER_RETRY_DELAY = Duration.ofMillis(25);

	private final StringRedisTemplate redis;

	private final ScriptCall call;

	/**
	 * Run the scripts with {@code EVALSHA} and {@code EVAL}.
	 * @param redis a template with string serializers on the connection factory delayed
	 * tasks uses
	 */
	public StoreScripts(StringRedisTemplate redis) {
		this(redis, new EvalScriptCall(redis));
	}

	/**
	 * Run the scripts as the given call sends them.
	 * @param redis a template with string serializers on the connection factory delayed
	 * tasks uses, for the plain reads of the store
	 * @param call how a script call is sent
	 */
	public StoreScripts(StringRedisTemplate redis, ScriptCall call) {
		this.redis = redis;
		this.call = call;
	}

	/**
	 * The text of a script as it is sent to Redis, and hashed for {@code EVALSHA}: its
	 * file with every {@code --- @include} inlined ({@link ScriptLoader}).
	 * @param script the script
	 * @return the text
	 */
	public static String source(Script script) {
		return source(script, ScriptClock.REDIS);
	}

	/**
	 * The text of a script as it is sent to Redis on a clock.
	 * @param script the script
	 * @param clock the clock its {@code now} include reads
	 * @return the text
	 */
	public static String source(Script script, ScriptClock clock) {
		return new ScriptLoader(clock).load(script.fileName());
	}

	/**
	 * The text of a Lua script that is not one of the store's own, with the store's
	 * includes inlined: delayed-tasks-test's scripts read Redis time through the same
	 * {@code now} include as the store's, on its test clock.
	 * @param fileName the script's path under
	 * {@code dev/delayedtasks/internal/store/script/} on the class path
	 * @param clock the clock its {@code now} include reads
	 * @return the script as sent to Redis
	 */
	public static String source(String fileName, ScriptClock clock) {
		return new ScriptLoader(clock).load(fileName);
	}

	/**
	 * Run a script.
	 * @param script the script
	 * @param keys its keys, shaped as {@link Script} declares
	 * @param args its arguments
	 * @param queue the queue, for error messages
	 * @param taskId the task being written, for error messages and retries, or
	 * {@code null}
	 * @return the script's reply, with bulk strings as {@code String} and integers as
	 * {@code Long}
	 * @throws TaskStoreException when Redis fails or cannot be reached
	 */
	public List<Object> run(Script script, List<String> keys, List<String> args, String queue,
			@Nullable String taskId) {
		return run(script, keys, args, queue, taskId, script != Script.CLAIM);
	}

	/**
	 * Run a script, retried while the master of its keys changes only when
	 * {@code retryWhileMasterChanges}: a call that leases tasks under a nonce (a claim, a
	 * promotion with a hand-off) must not be retried, since one stopped half-way has
	 * leased some of them already; its caller recovers them by that nonce instead.
	 * @param script the script
	 * @param keys its keys, shaped as {@link Script} declares
	 * @param args its arguments
	 * @param queue the queue, for error messages
	 * @param taskId the task being written, for error messages and retries, or
	 * {@code null}
	 * @param retryWhileMasterChanges whether a refusal because the master changes is
	 * retried
	 * @return the script's reply, with bulk strings as {@code String} and integers as
	 * {@code Long}
	 * @throws TaskStoreException when Redis fails or cannot be reached
	 */
	public List<Object> run(Script script, List<String> keys, List<String> args, String queue, @Nullable String taskId,
			boolean retryWhileMasterChanges) {
		Assert.isTrue(script.acceptsKeyCount(keys.size()), () -> script.fileName() + " takes " + script.fixedKeys()
				+ " + n*" + script.keysPerItem() + " keys, not " + keys.size());
		byte[][] keysAndArgs = new byte[keys.size() + args.size()][];
		int i = 0;
		for (String key : keys) {
			keysAndArgs[i++] = key.getBytes(StandardCharsets.UTF_8);
		}
		for (String arg : args) {
			keysAndArgs[i++] = arg.getBytes(StandardCharsets.UTF_8);
		}
		return ScriptReplies
			.decode(runEncoded(script, keys.size(), keysAndArgs, queue, taskId, retryWhileMasterChanges));
	}

	/**
	 * Whether Redis refused the script because the master of its keys is changing: a
	 * Cluster slot moving between masters, a Cluster without a master for a moment, or a
	 * Sentinel failover that has just demoted the master we still talk to. Lettuce
	 * follows {@code MOVED} and {@code ASK} itself, but not {@code TRYAGAIN} (some keys
	 * of the partition already moved), a derived key that already moved ("non local
	 * key"), {@code CLUSTERDOWN} or {@code READONLY}. Redis refuses {@code TRYAGAIN} and
	 * {@code CLUSTERDOWN} before the script runs; {@code READONLY} stops it at its first
	 * write. "Non local key" can stop a batch script after earlier items were written,
	 * but each item touches its undeclared keys before its first write, so every item is
	 * either done or untouched, and a retry does the rest: ids are minted before the
	 * call.
	 * @param ex the failure of a script call
	 * @return whether the master of the keys is changing, so a retry can succeed
	 */
	static boolean isTopologyChanging(DataAccessException ex) {
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		String message = String.valueOf(cause.getMessage()) + " " + ex.getMessage();
		return message.contains("TRYAGAIN") || message.contains("CLUSTERDOWN") || message.contains("non local key")
				|| REDIRECT.matcher(message).find() || message.contains("READONLY");
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Redis's own words: a script error arrives as "Error in execution" wrapping the
	 * server's reply (for example {@code WRONGTYPE ...}), a failed connection as "Unable
	 * to connect" wrapping the reason (for example an untrusted TLS certificate). An ACL
	 * refusal also gets what to do about it.
	 * @param ex the failure
	 * @return the reason, for an error message
	 */
	public static String reason(DataAccessException ex) {
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		String message = (cause.getMessage() != null) ? cause.getMessage() : cause.getClass().getName();
		String reason = (cause != ex && ex.getMessage() != null && !message.contains(ex.getMessage()))
				? ex.getMessage() + ": " + message : message;
		return AclDenial.isDenial(ex) ? reason + "; " + AclDenial.ADVICE : reason;
	}

	// The encoded call: every script call ends here.

	/**
	 * Run a script whose keys and arguments are already encoded: one call as the
	 * {@link ScriptCall} sends it ({@code EVALSHA} on the template's connection, with
	 * {@code EVAL} when Redis has lost its script cache, or {@code FCALL} of the
	 * library's function), and the retries of {@link #run} while a Cluster or Sentinel
	 * master changes. This is the seam the hot paths use: {@code schedule} pre-encodes
	 * its keys once per queue.
	 * @param script the script
	 * @param keyCount how many of {@code keysAndArgs} are keys
	 * @param keysAndArgs the keys, then the arguments
	 * @param queue the queue, for error messages
	 * @param taskId the task being written, for error messages and retries, or
	 * {@code null}
	 * @return the script's reply as Redis sent it: bulk strings as {@code byte[]},
	 * integers as {@code Long}, {@code null} for a Lua {@code false}
	 * @throws TaskStoreException when Redis fails or cannot be reached
	 */
	public List<Object> runEncoded(Script script, int keyCount, byte[][] keysAndArgs, String queue,
			@Nullable String taskId) {
		return runEncoded(script, keyCount, keysAndArgs, queue, taskId, script != Script.CLAIM);
	}

	private List<Object> runEncoded(Script script, int keyCount, byte[][] keysAndArgs, String queue,
			@Nullable String taskId, boolean retryWhileMasterChanges) {
		for (int attempt = 1;; attempt++) {
			try {
				return this.call.call(script, keyCount, keysAndArgs);
			}
			catch (DataAccessException ex) {
				// A call that leases is not retried here: one stopped half-way
				// has leased tasks under its nonce, and its caller recovers them
				// by that nonce and leases again with a new one.
				if (retryWhileMasterChanges && attempt < CLUSTER_RETRIES && isTopologyChanging(ex)) {
					sleep(CLUSTER_RETRY_DELAY.toMillis() << (attempt - 1));
					continue;
				}
				throw failure(script, queue, taskId, ex);
			}
		}
	}

	/**
	 * The exception for a script call that failed: which script, queue and task, and
	 * Redis's reason.
	 * @param script the script
	 * @param queue the queue
	 * @param taskId the task, or {@code null}
	 * @param ex the failure
	 * @return the exception to throw
	 */
	static TaskStoreException failure(Script script, String queue, @Nullable String taskId, DataAccessException ex) {
		return new TaskStoreException(
				"Redis failed to run " + script.fileName() + " for queue '" + queue + "'"
						+ ((taskId != null) ? " (task " + taskId + ")" : "") + ": " + reason(ex),
				(taskId != null) ? new TaskId(taskId) : null, ex);
	}

	/**
	 * Prepare Redis for the first calls at startup, as the {@link ScriptCall} needs: with
	 * {@code EVALSHA}, every script is loaded into the script cache ({@code SCRIPT LOAD};
	 * on a Cluster, on every master), so that no first call is answered {@code NOSCRIPT};
	 * a function library is already checked or loaded by the startup check, so Functions
	 * mode sends nothing here.
	 * @throws org.springframework.dao.DataAccessException when Redis cannot be reached or
	 * refuses the command
	 */
	public void loadAll() {
		this.call.warmUp();
	}

	/**
	 * How script calls are sent.
	 * @return the call
	 */
	ScriptCall call() {
		return this.call;
	}

	/**
	 * The template scripts run on, for plain reads.
	 * @return the template
	 */
	public StringRedisTemplate template() {
		return this.redis;
	}

}

package dev.delayedtasks.store;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskStoreException;
import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.Assert;

/**
 * Runs the Lua scripts on the application's Redis connection. Each script is read once,
 * with the shared code it includes inlined by {@link ScriptLoader}; the SHA-1 that
 * {@code EVALSHA} names is that of the inlined text. Spring Data Redis sends
 * {@code EVALSHA} and falls back to {@code EVAL} when the server has lost its script
 * cache (restart, failover, {@code SCRIPT FLUSH}). A script refused while a Redis Cluster
 * slot moves or a master fails over is retried for a few seconds. Redis failures become
 * {@link TaskStoreException}s that say which operation on which queue failed, and, when
 * Redis's ACL refused it, what permission to grant.
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

	private final Map<Script, RedisScript<List>> scripts = new EnumMap<>(Script.class);

	/**
	 * Load every script from the classpath, with its includes inlined.
	 * @param redis a template with string serializers on the connection factory delayed
	 * tasks uses
	 */
	public StoreScripts(StringRedisTemplate redis) {
		this.redis = redis;
		// Read once: a resource-backed script would re-check its file on every call.
		ScriptLoader loader = new ScriptLoader();
		for (Script script : Script.values()) {
			this.scripts.put(script, RedisScript.of(loader.load(script.fileName()), List.class));
		}
	}

	/**
	 * The text of a script as it is sent to Redis, and hashed for {@code EVALSHA}: its
	 * file with every {@code --- @include} inlined ({@link ScriptLoader}).
	 * @param script the script
	 * @return the text
	 */
	public static String source(Script script) {
		return new ScriptLoader().load(script.fileName());
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
		Assert.isTrue(script.acceptsKeyCount(keys.size()), () -> script.fileName() + " takes " + script.fixedKeys()
				+ " + n*" + script.keysPerItem() + " keys, not " + keys.size());
		for (int attempt = 1;; attempt++) {
			try {
				@SuppressWarnings("unchecked")
				List<Object> reply = this.redis.execute(this.scripts.get(script), keys, args.toArray());
				Assert.state(reply != null, () -> script.fileName() + " returned no reply");
				return reply;
			}
			catch (DataAccessException ex) {
				// A claim is not retried here: one stopped half-way has
				// leased tasks under its nonce, and the dispatcher recovers
				// them by that nonce and claims again with a new one.
				if (script != Script.CLAIM && attempt < CLUSTER_RETRIES && isTopologyChanging(ex)) {
					sleep(CLUSTER_RETRY_DELAY.toMillis() << (attempt - 1));
					continue;
				}
				throw new TaskStoreException(
						"Redis failed to run " + script.fileName() + " for queue '" + queue + "'"
								+ ((taskId != null) ? " (task " + taskId + ")" : "") + ": " + reason(ex),
						(taskId != null) ? new TaskId(taskId) : null, ex);
			}
		}
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
	static String reason(DataAccessException ex) {
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		String message = (cause.getMessage() != null) ? cause.getMessage() : cause.getClass().getName();
		String reason = (cause != ex && ex.getMessage() != null && !message.contains(ex.getMessage()))
				? ex.getMessage() + ": " + message : message;
		return AclDenial.isDenial(ex) ? reason + "; " + AclDenial.ADVICE : reason;
	}

	/**
	 * The template scripts run on, for plain reads.
	 * @return the template
	 */
	StringRedisTemplate template() {
		return this.redis;
	}

}

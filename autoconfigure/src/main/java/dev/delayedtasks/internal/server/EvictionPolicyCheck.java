package dev.delayedtasks.internal.server;

import java.util.List;
import java.util.Properties;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Checks at startup that Redis will not evict tasks. An {@code allkeys-*} eviction policy
 * can delete any task when memory runs short, so the application refuses to start (or
 * warns, if configured so). A {@code volatile-*} policy only evicts keys with a TTL,
 * which here are helper keys (timer leases, unique slots, cancel markers) and outcome
 * records (an evicted one loses a tracked task's outcome): a warning. Where {@code INFO}
 * is not permitted (some managed services), a warning says the check could not run.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class EvictionPolicyCheck {

	private static final Log logger = LogFactory.getLog(EvictionPolicyCheck.class);

	private final StringRedisTemplate redis;

	private final boolean failOnAllKeys;

	/**
	 * Create a check.
	 * @param redis the template
	 * @param failOnAllKeys whether an {@code allkeys-*} policy stops startup
	 * ({@code false}: a warning)
	 */
	public EvictionPolicyCheck(StringRedisTemplate redis, boolean failOnAllKeys) {
		this.redis = redis;
		this.failOnAllKeys = failOnAllKeys;
	}

	/**
	 * Run the check.
	 * @throws DelayedTaskException if the policy can evict tasks and the check is set to
	 * fail
	 */
	public void verify() {
		String policy;
		try {
			Properties info = this.redis
				.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("memory"));
			policy = (info != null) ? strictestPolicy(info) : null;
		}
		catch (DataAccessException ex) {
			logger.warn("Could not read Redis's maxmemory-policy (INFO memory: " + StoreScripts.reason(ex)
					+ "); make sure it is noeviction, or an eviction can delete tasks");
			return;
		}
		if (policy == null) {
			logger.warn("Redis did not report its maxmemory-policy; make sure it is noeviction");
		}
		else if (policy.startsWith("allkeys-")) {
			String message = "Redis's maxmemory-policy is " + policy
					+ ": when memory runs short Redis deletes any key, tasks included, and they would be lost. Set "
					+ "maxmemory-policy noeviction (or volatile-*), or set delayed-tasks.eviction-policy-check=warn to "
					+ "start anyway";
			if (this.failOnAllKeys) {
				throw new DelayedTaskException(message);
			}
			logger.warn(message);
		}
		else if (policy.startsWith("volatile-")) {
			logger.warn("Redis's maxmemory-policy is " + policy + ": only keys with a TTL can be evicted, which for "
					+ "delayed tasks are helper keys (timer leases, unique slots, cancel markers) and outcome records "
					+ "(an evicted one loses a tracked task's outcome); prefer noeviction");
		}
	}

	/**
	 * The policy that can lose the most. On a Cluster connection Spring Data Redis asks
	 * every node and prefixes each property with the node's address
	 * ({@code 127.0.0.1:7000.maxmemory_policy}), and one node with {@code allkeys-*} is
	 * enough to lose the tasks of its slots.
	 * @param info the {@code INFO memory} reply
	 * @return the policy, or {@code null} when no node reports one
	 */
	private static @Nullable String strictestPolicy(Properties info) {
		List<String> policies = info.stringPropertyNames()
			.stream()
			.filter((name) -> name.equals("maxmemory_policy") || name.endsWith(".maxmemory_policy"))
			.map(info::getProperty)
			.toList();
		return policies.stream()
			.filter((policy) -> policy.startsWith("allkeys-"))
			.findFirst()
			.or(() -> policies.stream().filter((policy) -> policy.startsWith("volatile-")).findFirst())
			.or(() -> policies.stream().findFirst())
			.orElse(null);
	}

}

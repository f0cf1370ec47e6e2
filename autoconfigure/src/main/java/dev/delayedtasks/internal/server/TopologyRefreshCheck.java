package dev.delayedtasks.internal.server;

import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Warns at startup when a Redis Cluster is used through Lettuce with topology refresh
 * switched off: no adaptive refresh trigger and no periodic refresh. Without refresh,
 * after a failover or a slot migration the client keeps sending a moved slot's scripts
 * and blocking reads to the old master, and that queue's dispatchers, timer and producers
 * stall until the application restarts. Lettuce 7 enables every adaptive trigger by
 * default (Spring Boot 4.1 therefore dropped
 * {@code spring.data.redis.lettuce.cluster.refresh.adaptive}), so on Spring Boot 4.1 this
 * only fires when a customizer replaced the refresh options. Lettuce 6, which Spring Boot
 * 4.0 uses, refreshes nothing unless told to, so there it fires unless
 * {@code spring.data.redis.lettuce.cluster.refresh.adaptive} or {@code .period} is set.
 * The starter does not rewrite the application's client; it says what to change.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class TopologyRefreshCheck {

	private static final Log logger = LogFactory.getLog(TopologyRefreshCheck.class);

	private final RedisConnectionFactory connectionFactory;

	/**
	 * Check the given factory.
	 * @param connectionFactory the factory delayed tasks uses
	 */
	public TopologyRefreshCheck(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	/**
	 * Run the check, logging a warning when refresh is off.
	 * @return whether the topology is refreshed, or no refresh is needed (not a Lettuce
	 * Cluster connection)
	 */
	public boolean verify() {
		if (!(this.connectionFactory instanceof LettuceConnectionFactory lettuce) || !lettuce.isClusterAware()) {
			return true;
		}
		// No options, or plain ClientOptions: the cluster client uses Lettuce's defaults,
		// which refresh on MOVED, ASK and reconnects in Lettuce 7 and not at all in
		// Lettuce 6.
		boolean refreshed = lettuce.getClientConfiguration()
			.getClientOptions()
			.filter(ClusterClientOptions.class::isInstance)
			.map((options) -> refreshes(((ClusterClientOptions) options).getTopologyRefreshOptions()))
			.orElseGet(() -> refreshes(ClusterTopologyRefreshOptions.create()));
		if (!refreshed) {
			logger.warn("Redis Cluster is used with Lettuce topology refresh switched off (no adaptive refresh "
					+ "trigger, no periodic refresh): after a failover or a slot migration the delayed-tasks "
					+ "dispatchers, timers and producers of the moved slots keep talking to the old master. Keep "
					+ "Lettuce's adaptive refresh triggers on (Spring Boot 4.1: do not disable them in "
					+ "ClusterTopologyRefreshOptions; Spring Boot 4.0: set "
					+ "spring.data.redis.lettuce.cluster.refresh.adaptive=true) and set "
					+ "spring.data.redis.lettuce.cluster.refresh.period=30s");
		}
		return refreshed;
	}

	private static boolean refreshes(ClusterTopologyRefreshOptions options) {
		return options.isPeriodicRefreshEnabled() || !options.getAdaptiveRefreshTriggers().isEmpty();
	}

}

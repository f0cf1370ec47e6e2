package dev.delayedtasks.internal.server;

import java.lang.reflect.Method;

import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;

import org.springframework.util.ReflectionUtils;

/**
 * Cluster topology refresh options for tests that run on Lettuce 6 (Spring Boot 4.0) and
 * Lettuce 7 (Spring Boot 4.1) alike. Lettuce 7 turns every adaptive refresh trigger on by
 * default and only its builder's {@code disableAllAdaptiveRefreshTriggers()}, which
 * Lettuce 6 lacks, turns them off; Lettuce 6 starts with none.
 */
public final class RefreshOptions {

	private RefreshOptions() {
	}

	/**
	 * Whether this Lettuce refreshes the topology on its own, with options left at their
	 * defaults.
	 * @return {@code true} on Lettuce 7, {@code false} on Lettuce 6
	 */
	public static boolean lettuceRefreshesByDefault() {
		return !ClusterTopologyRefreshOptions.DEFAULT_ADAPTIVE_REFRESH_TRIGGERS.isEmpty();
	}

	/**
	 * A builder with no adaptive refresh trigger and no periodic refresh.
	 * @return the builder
	 */
	public static ClusterTopologyRefreshOptions.Builder withoutAdaptiveTriggers() {
		ClusterTopologyRefreshOptions.Builder builder = ClusterTopologyRefreshOptions.builder();
		if (lettuceRefreshesByDefault()) {
			Method disableAll = ReflectionUtils.findMethod(ClusterTopologyRefreshOptions.Builder.class,
					"disableAllAdaptiveRefreshTriggers");
			if (disableAll == null) {
				throw new IllegalStateException("This Lettuce has default adaptive refresh triggers but no "
						+ "disableAllAdaptiveRefreshTriggers(): " + ClusterTopologyRefreshOptions.class);
			}
			ReflectionUtils.invokeMethod(disableAll, builder);
		}
		return builder;
	}

	/**
	 * Options that never refresh the topology.
	 * @return the options
	 */
	public static ClusterTopologyRefreshOptions off() {
		return withoutAdaptiveTriggers().build();
	}

}

package dev.delayedtasks.dashboard;

import dev.delayedtasks.internal.store.RedisInstanceRegistry;
import dev.delayedtasks.internal.store.RedisInstanceRegistry.Instances;

/**
 * The instances the dashboard shows: those that run workers, as each reports itself every
 * 10 seconds ({@code delayed-tasks.monitoring.instances}), read in two Redis calls
 * whatever their number (at most {@value RedisInstanceRegistry#MAX_READ} listed).
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public class DashboardInstances {

	private final RedisInstanceRegistry registry;

	/**
	 * Create the reads.
	 * @param registry the instance registry
	 */
	public DashboardInstances(RedisInstanceRegistry registry) {
		this.registry = registry;
	}

	/**
	 * The instances alive now, by id.
	 * @return the instances
	 */
	public Instances alive() {
		return this.registry.alive();
	}

}

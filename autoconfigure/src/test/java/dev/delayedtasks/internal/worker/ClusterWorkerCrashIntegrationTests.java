package dev.delayedtasks.internal.worker;

import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;

/**
 * {@link WorkerCrashIntegrationTests} on a three-master Redis Cluster: the test's worker
 * and the killed child workers connect through {@code spring.data.redis.cluster.nodes}.
 */
@WithRedis(cluster = true)
class ClusterWorkerCrashIntegrationTests extends WorkerCrashIntegrationTests {

	ClusterWorkerCrashIntegrationTests(TestRedis redis) {
		super(redis);
	}

}

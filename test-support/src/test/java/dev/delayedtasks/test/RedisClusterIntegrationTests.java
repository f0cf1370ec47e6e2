package dev.delayedtasks.test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class RedisClusterIntegrationTests {

	@TempDir
	Path directory;

	@Test
	void startsAThreeMasterClusterWithReplicasCleansKeysOnEveryMasterAndStopsEveryNode() {
		RedisServers servers = new RedisServers(System.getenv(), new PidFiles(this.directory));
		RedisCluster cluster = servers.startCluster(RedisKind.ANY, 3, 1);
		List<RedisProcess> nodes = cluster.processes();
		try {
			assertThat(cluster.nodes()).hasSize(6);
			for (RedisProcess node : nodes) {
				assertThat(this.directory.resolve("redis-" + node.port() + ".pid")).exists();
			}
			TestRedis redis = new TestRedis(cluster, "dtt-cluster");
			List<RedisURI> seeds = cluster.nodes().stream().map((node) -> RedisURI.create("redis://" + node)).toList();
			RedisClusterClient client = RedisClusterClient.create(seeds);
			try (StatefulRedisClusterConnection<String, String> connection = client.connect()) {
				RedisAdvancedClusterCommands<String, String> commands = connection.sync();
				assertThat(commands.clusterNodes().lines().filter((line) -> line.contains("master"))).hasSize(3);
				List<String> keys = List.of("a", "b", "c", "d", "e", "f", "g", "h")
					.stream()
					.map((tag) -> "dtt-cluster:{" + tag + ":0}:sched")
					.toList();
				keys.forEach((key) -> commands.set(key, "1"));
				commands.set("other:{a:0}:sched", "kept");
				Set<String> owners = keys.stream()
					.map((key) -> connection.getPartitions()
						.getPartitionBySlot(commands.clusterKeyslot(key).intValue())
						.getNodeId())
					.collect(Collectors.toSet());
				assertThat(owners).as("masters holding the test keys").hasSizeGreaterThanOrEqualTo(2);
				assertThat(redis.deleteKeys()).isEqualTo(keys.size());
				assertThat(keys.stream().map(commands::exists)).containsOnly(0L);
				assertThat(commands.get("other:{a:0}:sched")).isEqualTo("kept");
			}
			finally {
				client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
			}
		}
		finally {
			cluster.close();
		}
		for (RedisProcess node : nodes) {
			assertThat(node.process().isAlive()).isFalse();
			assertThat(this.directory.resolve("redis-" + node.port() + ".pid")).doesNotExist();
		}
	}

}

package dev.delayedtasks.test;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class RedisSentinelsIntegrationTests {

	@TempDir
	Path directory;

	@Test
	void startsAMasterAReplicaAndThreeSentinelsFailsOverAndStopsEveryProcess() {
		RedisServers servers = new RedisServers(System.getenv(), new PidFiles(this.directory));
		RedisSentinels sentinels = servers.startSentinels();
		List<RedisProcess> all = new java.util.ArrayList<>(sentinels.dataNodes());
		all.addAll(sentinels.sentinels());
		try {
			assertThat(sentinels.sentinelNodesProperty().split(",")).hasSize(3);
			RedisProcess first = sentinels.master();
			assertThat(first).isSameAs(sentinels.dataNodes().get(0));
			RedisProcess second = sentinels.failover();
			assertThat(second).isNotSameAs(first);
			assertThat(sentinels.master()).isSameAs(second);
			for (RedisProcess node : all) {
				assertThat(this.directory.resolve("redis-" + node.port() + ".pid")).exists();
			}
		}
		finally {
			sentinels.close();
		}
		for (RedisProcess node : all) {
			assertThat(node.process().isAlive()).isFalse();
			assertThat(this.directory.resolve("redis-" + node.port() + ".pid")).doesNotExist();
		}
	}

}

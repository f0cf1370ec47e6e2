package dev.delayedtasks.test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class RedisSentinelsIntegrationTests {

	@TempDir
	Path directory;

	@Test
	void startsAMasterAReplicaAndThreeSentinelsFailsOverAndStopsEveryProcess() {
		RedisServers servers = new RedisServers(System.getenv(), new PidFiles(this.directory));
		RedisSentinels sentinels = servers.startSentinels(RedisKind.ANY);
		List<RedisProcess> all = new ArrayList<>(sentinels.dataNodes());
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

	@Test
	void withoutRedisOnThePathRunsTheSentinelsFromTheBundledBinary() {
		assumeTrue(RedisBinaries.bundledResourceName() != null, "embedded-redis has no binary for this platform");
		RedisServers servers = new RedisServers(Map.of("PATH", this.directory.toString()),
				new PidFiles(this.directory));
		try (RedisSentinels sentinels = servers.startSentinels(RedisKind.ANY)) {
			assertThat(sentinels.kind()).isEqualTo(RedisKind.BUNDLED_6_2);
			assertThat(sentinels.version()).startsWith("6.2.");
			assertThat(sentinels.sentinels())
				.allSatisfy((sentinel) -> assertThat(sentinel.kind()).isEqualTo(RedisKind.BUNDLED_6_2));
			assertThat(sentinels.master()).isSameAs(sentinels.dataNodes().get(0));
		}
	}

}

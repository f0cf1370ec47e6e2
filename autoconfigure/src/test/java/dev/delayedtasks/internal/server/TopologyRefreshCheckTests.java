package dev.delayedtasks.internal.server;

import java.time.Duration;

import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(OutputCaptureExtension.class)
class TopologyRefreshCheckTests {

	private static final RedisClusterConfiguration CLUSTER = new RedisClusterConfiguration().clusterNode("127.0.0.1",
			7000);

	@Test
	void aClusterWithRefreshSwitchedOffWarnsAndSaysWhatToChange(CapturedOutput output) {
		assertThat(check(RefreshOptions.off())).isFalse();
		assertThat(output).contains("Redis Cluster is used with Lettuce topology refresh switched off")
			.contains("adaptive refresh triggers")
			.contains("spring.data.redis.lettuce.cluster.refresh.period=");
	}

	@Test
	void lettuceDefaultsAreJudgedAsTheyAre(CapturedOutput output) {
		// Lettuce 7 (Spring Boot 4.1) refreshes adaptively by default; Lettuce 6 (Spring
		// Boot 4.0) does not refresh at all unless told to.
		boolean refreshes = RefreshOptions.lettuceRefreshesByDefault();
		assertThat(new TopologyRefreshCheck(new LettuceConnectionFactory(CLUSTER)).verify()).isEqualTo(refreshes);
		LettuceConnectionFactory defaultOptions = new LettuceConnectionFactory(CLUSTER,
				LettuceClientConfiguration.builder().clientOptions(ClusterClientOptions.builder().build()).build());
		assertThat(new TopologyRefreshCheck(defaultOptions).verify()).isEqualTo(refreshes);
		if (refreshes) {
			assertThat(output).doesNotContain("topology refresh");
		}
		else {
			assertThat(output).contains("spring.data.redis.lettuce.cluster.refresh.adaptive=true");
		}
	}

	@Test
	void adaptiveRefreshIsEnough(CapturedOutput output) {
		// Lettuce 7's default; what
		// spring.data.redis.lettuce.cluster.refresh.adaptive=true
		// sets on Spring Boot 4.0.
		ClusterTopologyRefreshOptions refresh = ClusterTopologyRefreshOptions.builder()
			.enableAllAdaptiveRefreshTriggers()
			.build();
		assertThat(check(refresh)).isTrue();
		assertThat(output).doesNotContain("topology refresh");
	}

	@Test
	void periodicRefreshIsEnough(CapturedOutput output) {
		ClusterTopologyRefreshOptions refresh = RefreshOptions.withoutAdaptiveTriggers()
			.enablePeriodicRefresh(Duration.ofSeconds(30))
			.build();
		assertThat(check(refresh)).isTrue();
		assertThat(output).doesNotContain("topology refresh");
	}

	@Test
	void aStandaloneServerNeedsNoRefresh(CapturedOutput output) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(),
				LettuceClientConfiguration.defaultConfiguration());
		assertThat(new TopologyRefreshCheck(factory).verify()).isTrue();
		assertThat(output).doesNotContain("topology refresh");
	}

	private static boolean check(ClusterTopologyRefreshOptions refresh) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(CLUSTER,
				LettuceClientConfiguration.builder()
					.clientOptions(ClusterClientOptions.builder().topologyRefreshOptions(refresh).build())
					.build());
		return new TopologyRefreshCheck(factory).verify();
	}

}

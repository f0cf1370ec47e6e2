package dev.delayedtasks.test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link RedisKind#VALKEY}: every server of that kind, private, TLS, cluster or Sentinel,
 * is a {@code valkey-server}, and says so.
 */
class ValkeyServersIntegrationTests {

	@TempDir
	Path directory;

	@Test
	void startsValkeyServerFromThePathAndRecordsItAsValkey() throws Exception {
		RedisServers servers = valkeyServers();
		try (RedisProcess valkey = servers.startProcess(RedisKind.VALKEY, List.of())) {
			assertThat(valkey.kind()).isEqualTo(RedisKind.VALKEY);
			assertThat(valkey.serverVersion().name()).isEqualTo("valkey");
			assertThat(valkey.describe()).startsWith("valkey-" + valkey.serverVersion().version())
				.contains("valkey-server");
			servers.recordUse(valkey, "com.example.SomeTests");
			assertThat(Files.readString(this.directory.resolve(RedisServers.USED_FILE)))
				.isEqualTo("redis_version=" + valkey.version() + " server=" + valkey.serverVersion().label()
						+ " kind=VALKEY class=com.example.SomeTests\n");
		}
	}

	@Test
	void aForcedValkeyKindGivesPrivateAndTlsServersOfValkeyToo() {
		assumeTrue(new RedisBinaries(System.getenv("PATH"), this.directory).onPath("openssl").isPresent(),
				"no openssl on PATH on this machine");
		RedisServers servers = valkeyServers();
		RedisKind kind = RedisServerExtension.resolveKind(RedisKind.ANY, RedisKind.VALKEY, true);
		try (RedisServer valkey = servers.startPrivate(kind, List.of("--hz", "10"))) {
			assertThat(valkey.serverVersion().name()).isEqualTo("valkey");
		}
		try (RedisProcess valkey = servers.startTls(kind, List.of())) {
			assertThat(valkey.serverVersion().name()).isEqualTo("valkey");
			assertThat(valkey.describe()).contains("TLS only");
		}
	}

	@Test
	void aValkeyClusterIsMadeOfValkeyServers() {
		try (RedisCluster cluster = valkeyServers().startCluster(RedisKind.VALKEY, 3, 0)) {
			assertThat(cluster.kind()).isEqualTo(RedisKind.VALKEY);
			assertThat(cluster.serverVersion().name()).isEqualTo("valkey");
			assertThat(cluster.masters()).allSatisfy((node) -> assertThat(node.kind()).isEqualTo(RedisKind.VALKEY));
		}
	}

	@Test
	void valkeySentinelsAreValkeyServersStartedWithSentinel() {
		try (RedisSentinels sentinels = valkeyServers().startSentinels(RedisKind.VALKEY)) {
			assertThat(sentinels.serverVersion().name()).isEqualTo("valkey");
			assertThat(sentinels.sentinels()).hasSize(3).allSatisfy((sentinel) -> {
				assertThat(sentinel.kind()).isEqualTo(RedisKind.VALKEY);
				assertThat(sentinel.describe()).contains("valkey-server");
			});
		}
	}

	@Test
	void withoutValkeyOnThePathTheKindIsUnavailableAndNeverFallsBackToRedis() {
		RedisServers servers = new RedisServers(Map.of("PATH", this.directory.toString()),
				new PidFiles(this.directory));
		List<ThrowingCallable> starts = List.of(() -> servers.startProcess(RedisKind.VALKEY, List.of()),
				() -> servers.shared(RedisKind.VALKEY), () -> servers.startSentinels(RedisKind.VALKEY),
				() -> servers.startCluster(RedisKind.VALKEY, 3, 0));
		for (ThrowingCallable start : starts) {
			assertThatExceptionOfType(RedisUnavailableException.class).isThrownBy(start)
				.withMessage("No valkey-server on PATH");
		}
	}

	private RedisServers valkeyServers() {
		assumeTrue(new RedisBinaries(System.getenv("PATH"), this.directory).onPath(RedisBinaries.VALKEY_SERVER)
			.isPresent(), "no valkey-server on PATH on this machine");
		return new RedisServers(System.getenv(), new PidFiles(this.directory));
	}

}

package dev.delayedtasks.test;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertPathBuilderException;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.SslOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class RedisServersIntegrationTests {

	@TempDir
	Path directory;

	@Test
	void startsRedisServerFromPathOnAFreePortAndStopsIt() {
		RedisServers servers = new RedisServers(System.getenv(), new PidFiles(this.directory));
		assumeTrue(new RedisBinaries(System.getenv("PATH"), this.directory).onPath().isPresent(),
				"no redis-server on PATH on this machine");
		RedisProcess redis = servers.startProcess(RedisKind.PATH_BINARY, List.of());
		try {
			assertThat(redis.kind()).isEqualTo(RedisKind.PATH_BINARY);
			assertThat(RedisProcess.ping(redis.port())).isTrue();
			assertThat(this.directory.resolve("redis-" + redis.port() + ".pid")).exists();
		}
		finally {
			redis.close();
		}
		assertThat(RedisProcess.ping(redis.port())).isFalse();
		assertThat(redis.process().isAlive()).isFalse();
		assertThat(this.directory.resolve("redis-" + redis.port() + ".pid")).doesNotExist();
	}

	@Test
	void startsATlsOnlyServerWhoseCertificateOnlyTheTestCaVouchesFor() {
		assumeTrue(new RedisBinaries(System.getenv("PATH"), this.directory).onPath().isPresent(),
				"no redis-server on PATH on this machine");
		assumeTrue(onPath("openssl"), "no openssl on PATH on this machine");
		RedisServers servers = new RedisServers(System.getenv(), new PidFiles(this.directory));
		try (RedisProcess redis = servers.startTls(RedisKind.PATH_BINARY, List.of())) {
			assertThat(redis.url()).isEqualTo("rediss://127.0.0.1:" + redis.port());
			assertThat(redis.describe()).contains("TLS only");
			assertThat(RedisProcess.ping(redis.port())).as("plain PING on the TLS port").isFalse();
			Path ca = redis.caCertificate().orElseThrow();
			RedisClient trusting = RedisClient.create(redis.uri());
			trusting.setOptions(
					ClientOptions.builder().sslOptions(SslOptions.builder().trustManager(ca.toFile()).build()).build());
			try (StatefulRedisConnection<String, String> connection = trusting.connect()) {
				assertThat(connection.sync().ping()).isEqualTo("PONG");
			}
			finally {
				trusting.shutdown();
			}
			RedisClient untrusting = RedisClient.create(redis.uri());
			try {
				assertThatExceptionOfType(RedisConnectionException.class).isThrownBy(untrusting::connect)
					.withRootCauseInstanceOf(CertPathBuilderException.class);
			}
			finally {
				untrusting.shutdown();
			}
		}
	}

	@Test
	void aServerThatExitsAtStartFailsWithTheEndOfItsLog() {
		RedisServers servers = new RedisServers(System.getenv(), new PidFiles(this.directory));
		assertThatExceptionOfType(RedisStartFailedException.class)
			.isThrownBy(() -> servers.startProcess(RedisKind.ANY, List.of("--no-such-directive", "yes")))
			.withMessageContaining("redis-server exited with code 1")
			.withMessageContaining("redis.log:\n")
			.withMessageContaining("'no-such-directive \"yes\"'");
	}

	@Test
	void aTlsServerIsNeverAContainerOrTheSharedUrl() {
		RedisServers servers = new RedisServers(Map.of(), new PidFiles(this.directory));
		assertThatExceptionOfType(RedisUnavailableException.class)
			.isThrownBy(() -> servers.startTls(RedisKind.DOCKER, List.of()))
			.withMessageContaining("TLS");
	}

	@Test
	void startsTheRedis62BinaryFromTheMavenArtifact() {
		assumeTrue(RedisBinaries.bundledResourceName() != null, "embedded-redis has no binary for this platform");
		RedisServers servers = new RedisServers(Map.of(), new PidFiles(this.directory));
		try (RedisServer redis = servers.startPrivate(RedisKind.BUNDLED_6_2, List.of())) {
			assertThat(redis.kind()).isEqualTo(RedisKind.BUNDLED_6_2);
			assertThat(redis.version()).isEqualTo("6.2.11");
		}
	}

	@Test
	void withoutRedisOnPathAnyFallsBackToTheBundledBinary() {
		RedisServers servers = new RedisServers(Map.of("PATH", this.directory.toString()),
				new PidFiles(this.directory));
		try (RedisServer redis = servers.startPrivate(RedisKind.ANY, List.of("--hz", "10"))) {
			assertThat(redis.kind()).isEqualTo(RedisKind.BUNDLED_6_2);
		}
	}

	@Test
	void usesTheUrlFromTheEnvironmentAndNeverStopsThatServer() {
		RedisServers local = new RedisServers(System.getenv(), new PidFiles(this.directory));
		try (RedisProcess redis = local.startProcess(RedisKind.ANY, List.of())) {
			RedisServers servers = new RedisServers(Map.of(RedisServers.URL_VARIABLE, redis.url()),
					new PidFiles(this.directory));
			RedisServer shared = servers.shared(RedisKind.ANY);
			assertThat(shared.kind()).isEqualTo(RedisKind.URL);
			assertThat(shared.uri().getPort()).isEqualTo(redis.port());
			assertThat(shared.version()).isEqualTo(redis.version());
			shared.close();
			assertThat(RedisProcess.ping(redis.port())).isTrue();
		}
	}

	@Test
	void aPrivateServerIsNeverTheSharedUrl() {
		RedisServers servers = new RedisServers(Map.of(RedisServers.URL_VARIABLE, "redis://127.0.0.1:6379"),
				new PidFiles(this.directory));
		assertThatExceptionOfType(RedisUnavailableException.class)
			.isThrownBy(() -> servers.startPrivate(RedisKind.URL, List.of()))
			.withMessageContaining("shared server");
	}

	@Test
	void urlKindWithoutTheVariableSaysWhatIsMissing() {
		RedisServers servers = new RedisServers(Map.of(), new PidFiles(this.directory));
		assertThatExceptionOfType(RedisUnavailableException.class).isThrownBy(() -> servers.shared(RedisKind.URL))
			.withMessageContaining(RedisServers.URL_VARIABLE);
	}

	@Test
	void startsARedisContainerWhenDockerAnswers() {
		RedisServers servers = new RedisServers(System.getenv(), new PidFiles(this.directory));
		String reason = servers.dockerUnavailableReason();
		assumeTrue(reason == null, () -> "Testcontainers path skipped: " + reason);
		try (RedisServer redis = servers.startPrivate(RedisKind.DOCKER, List.of())) {
			assertThat(redis.kind()).isEqualTo(RedisKind.DOCKER);
			assertThat(redis.version()).startsWith("7.");
		}
	}

	@Test
	void reapsAServerWhoseJvmIsGone() throws Exception {
		PidFiles pidFiles = new PidFiles(this.directory);
		RedisServers servers = new RedisServers(System.getenv(), pidFiles);
		RedisProcess redis = servers.startProcess(RedisKind.ANY, List.of());
		try {
			Process exited = new ProcessBuilder("true").start();
			exited.waitFor();
			Path pidFile = this.directory.resolve("redis-" + redis.port() + ".pid");
			Files.writeString(pidFile, "redis=" + redis.process().pid() + "\nowner=" + exited.pid() + "\n");
			assertThat(pidFiles.reapOrphans()).isEqualTo(1);
			redis.process().waitFor();
			assertThat(redis.process().isAlive()).isFalse();
			assertThat(pidFile).doesNotExist();
		}
		finally {
			redis.close();
		}
	}

	@Test
	void leavesServersOfLiveJvmsAlone() {
		PidFiles pidFiles = new PidFiles(this.directory);
		try (RedisProcess redis = new RedisServers(System.getenv(), pidFiles).startProcess(RedisKind.ANY, List.of())) {
			assertThat(pidFiles.reapOrphans()).isZero();
			assertThat(RedisProcess.ping(redis.port())).isTrue();
		}
	}

	private static boolean onPath(String command) {
		String path = System.getenv("PATH");
		return path != null && Stream.of(path.split(File.pathSeparator))
			.anyMatch((entry) -> Files.isExecutable(Path.of(entry, command)));
	}

}

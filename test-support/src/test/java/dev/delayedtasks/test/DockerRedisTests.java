package dev.delayedtasks.test;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Ports;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.core.CreateContainerCmdModifier;
import org.testcontainers.shaded.com.github.dockerjava.core.command.CreateContainerCmdImpl;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Docker Redis's configuration, inspected without a Docker engine: the container is
 * never started.
 */
class DockerRedisTests {

	@Test
	void theServerRequiresARandomPasswordOfItsOwn() {
		String password = passwordOf(DockerRedis.container(DockerRedis.newPassword(new SecureRandom()), true));
		String other = passwordOf(DockerRedis.container(DockerRedis.newPassword(new SecureRandom()), true));
		assertThat(password).matches("[0-9a-f]{64}");
		assertThat(other).matches("[0-9a-f]{64}").isNotEqualTo(password);
	}

	@Test
	void onALocalDockerHostThePortIsPublishedOnLoopbackOnly() {
		CreateContainerCmd command = created(DockerRedis.container("secret", true));
		Map<ExposedPort, Ports.Binding[]> bindings = command.getHostConfig().getPortBindings().getBindings();
		assertThat(bindings).containsOnlyKeys(ExposedPort.tcp(DockerRedis.PORT));
		assertThat(bindings.get(ExposedPort.tcp(DockerRedis.PORT)))
			.containsExactly(Ports.Binding.bindIp(DockerRedis.LOOPBACK));
	}

	@Test
	void onARemoteDockerHostThePortIsPublishedAsTestcontainersDoes() {
		assertThat(DockerRedis.container("secret", false).getCreateContainerCmdModifiers()).isEmpty();
		assertThat(created(DockerRedis.container("secret", false)).getHostConfig().getPortBindings()).isNull();
	}

	@Test
	void aDockerHostOnThisMachineIsRecognised() {
		assertThat(DockerRedis.isLoopback("localhost")).isTrue();
		assertThat(DockerRedis.isLoopback("127.0.0.1")).isTrue();
		assertThat(DockerRedis.isLoopback("::1")).isTrue();
		assertThat(DockerRedis.isLoopback("192.0.2.10")).isFalse();
	}

	@Test
	void everyConnectionHandedOutCarriesThePassword() {
		String password = DockerRedis.newPassword(new SecureRandom());
		RedisURI uri = DockerRedis.uri(DockerRedis.LOOPBACK, 32768, password);
		TestRedis redis = new TestRedis(new FixedUriServer(uri), "dtt-test");
		assertThat(passwordOf(redis.uri())).isEqualTo(password);
		assertThat(redis.url()).isEqualTo("redis://:" + password + "@127.0.0.1:32768");
		assertThat(redis.connectionProperties()).containsExactly("spring.data.redis.url=" + redis.url());
		RedisURI parsed = RedisURI.create(redis.url());
		assertThat(passwordOf(parsed)).isEqualTo(password);
		assertThat(parsed.getHost()).isEqualTo("127.0.0.1");
		assertThat(parsed.getPort()).isEqualTo(32768);
	}

	@Test
	void aUrlEncodesCredentialsAndLeavesAServerWithoutThemAlone() {
		RedisURI withCredentials = RedisURI.builder()
			.withHost("redis.example")
			.withPort(6380)
			.withAuthentication("ci user", "p@ss:word")
			.build();
		assertThat(new FixedUriServer(withCredentials).url())
			.isEqualTo("redis://ci%20user:p%40ss%3Aword@redis.example:6380");
		assertThat(new FixedUriServer(RedisURI.create("redis://127.0.0.1:7001")).url())
			.isEqualTo("redis://127.0.0.1:7001");
	}

	private static String passwordOf(GenericContainer<?> container) {
		List<String> command = Arrays.asList(container.getCommandParts());
		assertThat(command).startsWith("redis-server").contains("--requirepass");
		return command.get(command.indexOf("--requirepass") + 1);
	}

	private static String passwordOf(RedisURI uri) {
		RedisCredentials credentials = uri.getCredentialsProvider().resolveCredentials().block();
		assertThat(credentials).isNotNull();
		assertThat(credentials.hasPassword()).isTrue();
		return new String(credentials.getPassword());
	}

	/**
	 * The create command Testcontainers would send: publishing all exposed ports, as it
	 * does, then the container's modifiers.
	 */
	private static CreateContainerCmd created(GenericContainer<?> container) {
		CreateContainerCmd command = new CreateContainerCmdImpl((cmd) -> null, null, "redis:7.4-alpine")
			.withHostConfig(HostConfig.newHostConfig().withPublishAllPorts(true));
		for (CreateContainerCmdModifier modifier : container.getCreateContainerCmdModifiers()) {
			command = modifier.modify(command);
		}
		return command;
	}

	private record FixedUriServer(RedisURI uri) implements RedisServer {

		@Override
		public RedisKind kind() {
			return RedisKind.DOCKER;
		}

		@Override
		public String version() {
			return "7.4.0";
		}

		@Override
		public String describe() {
			return "a server at " + this.uri;
		}

		@Override
		public void close() {
		}

	}

}

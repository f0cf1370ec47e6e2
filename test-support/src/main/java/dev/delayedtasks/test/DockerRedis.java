package dev.delayedtasks.test;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.util.HexFormat;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import io.lettuce.core.RedisURI;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A Redis 7 container. Only loaded when Testcontainers is on the class path.
 * <p>
 * Docker publishes a container's port on every interface of the Docker host, so the
 * server requires a password made for this container alone (every URI and URL handed out
 * carries it) and, when the Docker host is this machine, its port is published on
 * {@code 127.0.0.1} only.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class DockerRedis implements RedisServer {

	private static final DockerImageName IMAGE = DockerImageName.parse("redis:7.4-alpine");

	static final int PORT = 6379;

	static final String LOOPBACK = "127.0.0.1";

	private static final int PASSWORD_BYTES = 32;

	private final GenericContainer<?> container;

	private final String host;

	private final String password;

	private final ServerVersion version;

	private DockerRedis(GenericContainer<?> container, String host, String password) {
		this.container = container;
		this.host = host;
		this.password = password;
		this.version = RedisInfo.version(uri(), null);
	}

	static boolean dockerAvailable() {
		return DockerClientFactory.instance().isDockerAvailable();
	}

	static DockerRedis start() {
		boolean loopbackOnly = isLoopback(DockerClientFactory.instance().dockerHostIpAddress());
		String password = newPassword(new SecureRandom());
		GenericContainer<?> container = container(password, loopbackOnly);
		container.start();
		try {
			return new DockerRedis(container, loopbackOnly ? LOOPBACK : container.getHost(), password);
		}
		catch (RuntimeException ex) {
			container.stop();
			throw ex;
		}
	}

	/**
	 * A password for one container: random, and safe in a URL and a command line.
	 * @param random the source of randomness
	 * @return the password
	 */
	static String newPassword(SecureRandom random) {
		byte[] bytes = new byte[PASSWORD_BYTES];
		random.nextBytes(bytes);
		return HexFormat.of().formatHex(bytes);
	}

	/**
	 * The container, not started: a {@code redis-server} that requires the password, its
	 * port published on {@code 127.0.0.1} only when {@code loopbackOnly} (a Docker host
	 * elsewhere could not be reached there).
	 * @param password the password the server requires
	 * @param loopbackOnly whether to publish the port on the loopback interface only
	 * @return the container
	 */
	static GenericContainer<?> container(String password, boolean loopbackOnly) {
		GenericContainer<?> container = new GenericContainer<>(IMAGE).withExposedPorts(PORT)
			.withCommand("redis-server", "--requirepass", password);
		if (loopbackOnly) {
			// Testcontainers publishes all exposed ports, on 0.0.0.0; Docker publishes a
			// port that has a binding of its own only as that binding says.
			container.withCreateContainerCmdModifier((command) -> {
				HostConfig hostConfig = (command.getHostConfig() != null) ? command.getHostConfig()
						: HostConfig.newHostConfig();
				command.withHostConfig(hostConfig
					.withPortBindings(new PortBinding(Ports.Binding.bindIp(LOOPBACK), ExposedPort.tcp(PORT))));
			});
		}
		return container;
	}

	/**
	 * Whether a Docker host address is this machine.
	 * @param address the address Testcontainers reaches the Docker host's ports at
	 * @return whether it is a loopback address
	 */
	static boolean isLoopback(String address) {
		if ("localhost".equalsIgnoreCase(address)) {
			return true;
		}
		try {
			return InetAddress.getByName(address).isLoopbackAddress();
		}
		catch (UnknownHostException ex) {
			return false;
		}
	}

	/**
	 * The URI of a container's server.
	 * @param host the host its port is published on
	 * @param port the published port
	 * @param password the password the server requires
	 * @return the URI, with the password
	 */
	static RedisURI uri(String host, int port, String password) {
		return RedisURI.builder().withHost(host).withPort(port).withPassword(password.toCharArray()).build();
	}

	@Override
	public RedisKind kind() {
		return RedisKind.DOCKER;
	}

	@Override
	public RedisURI uri() {
		return uri(this.host, this.container.getMappedPort(PORT), this.password);
	}

	@Override
	public String version() {
		return this.version.redisVersion();
	}

	@Override
	public ServerVersion serverVersion() {
		return this.version;
	}

	@Override
	public String describe() {
		return "Redis " + version() + " in container " + IMAGE + " at " + uri().getHost() + ":" + uri().getPort()
				+ " (with a password of its own)";
	}

	@Override
	public void close() {
		this.container.stop();
	}

}

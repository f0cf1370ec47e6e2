package dev.delayedtasks.test;

import io.lettuce.core.RedisURI;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A Redis 7 container. Only loaded when Testcontainers is on the class path.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class DockerRedis implements RedisServer {

	private static final DockerImageName IMAGE = DockerImageName.parse("redis:7.4-alpine");

	private final GenericContainer<?> container;

	private final String version;

	private DockerRedis(GenericContainer<?> container) {
		this.container = container;
		this.version = RedisInfo.version(uri(), null);
	}

	static boolean dockerAvailable() {
		return DockerClientFactory.instance().isDockerAvailable();
	}

	static DockerRedis start() {
		GenericContainer<?> container = new GenericContainer<>(IMAGE).withExposedPorts(6379);
		container.start();
		return new DockerRedis(container);
	}

	@Override
	public RedisKind kind() {
		return RedisKind.DOCKER;
	}

	@Override
	public RedisURI uri() {
		return RedisURI.create(this.container.getHost(), this.container.getMappedPort(6379));
	}

	@Override
	public String version() {
		return this.version;
	}

	@Override
	public String describe() {
		return "Redis " + this.version + " in container " + IMAGE + " at " + uri().getHost() + ":" + uri().getPort();
	}

	@Override
	public void close() {
		this.container.stop();
	}

}

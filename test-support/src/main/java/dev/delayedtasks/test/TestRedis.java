package dev.delayedtasks.test;

import java.nio.file.Path;

import io.lettuce.core.RedisURI;

/**
 * The Redis a test class was given, with the key prefix the class must confine itself to.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class TestRedis {

	private final RedisServer server;

	private final String keyPrefix;

	TestRedis(RedisServer server, String keyPrefix) {
		this.server = server;
		this.keyPrefix = keyPrefix;
	}

	/**
	 * The server.
	 * @return the server
	 */
	public RedisServer server() {
		return this.server;
	}

	/**
	 * A key prefix unique to this test class, for example {@code dtt-3f9a1c}; use it as
	 * {@code delayed-tasks.key-prefix}. Every key under it is deleted after the class.
	 * @return the prefix
	 */
	public String keyPrefix() {
		return this.keyPrefix;
	}

	/**
	 * Connection details.
	 * @return the URI
	 */
	public RedisURI uri() {
		return this.server.uri();
	}

	/**
	 * The Redis URL, for {@code spring.data.redis.url}; {@code rediss://} for a
	 * {@link WithRedis#tls() TLS} server.
	 * @return the URL
	 */
	public String url() {
		return this.server.url();
	}

	/**
	 * The certificate (PEM) of the CA a client must trust to talk to a
	 * {@link WithRedis#tls() TLS} server, for example as
	 * {@code spring.ssl.bundle.pem.<name>.truststore.certificate}.
	 * @return the file
	 * @throws IllegalStateException if the server speaks plain TCP
	 */
	public Path caCertificate() {
		return this.server.caCertificate()
			.orElseThrow(() -> new IllegalStateException(
					"This Redis speaks plain TCP: annotate the test class with @WithRedis(tls = true)"));
	}

	/**
	 * The Spring Boot properties that connect an application to this server, as
	 * {@code name=value}: {@code spring.data.redis.url}, or the cluster nodes, or the
	 * Sentinel master and nodes.
	 * @return the properties
	 */
	public String[] connectionProperties() {
		if (this.server instanceof RedisCluster cluster) {
			return new String[] { "spring.data.redis.cluster.nodes=" + cluster.nodesProperty() };
		}
		if (this.server instanceof RedisSentinels sentinels) {
			return new String[] { "spring.data.redis.sentinel.master=" + RedisSentinels.MASTER_NAME,
					"spring.data.redis.sentinel.nodes=" + sentinels.sentinelNodesProperty() };
		}
		return new String[] { "spring.data.redis.url=" + url() };
	}

	/**
	 * The host.
	 * @return the host
	 */
	public String host() {
		return this.server.uri().getHost();
	}

	/**
	 * The port.
	 * @return the port
	 */
	public int port() {
		return this.server.uri().getPort();
	}

	/**
	 * The server's version.
	 * @return the version
	 */
	public String version() {
		return this.server.version();
	}

	/**
	 * The cluster, when the test class asked for one with {@link WithRedis#cluster()}.
	 * @return the cluster
	 * @throws IllegalStateException if the server is not a cluster
	 */
	public RedisCluster cluster() {
		if (!(this.server instanceof RedisCluster cluster)) {
			throw new IllegalStateException(
					"Not a Redis Cluster: annotate the test class with @WithRedis(cluster = true)");
		}
		return cluster;
	}

	/**
	 * The master, replica and Sentinels, when the test class asked for them with
	 * {@link WithRedis#sentinel()}.
	 * @return the Sentinels
	 * @throws IllegalStateException if the server is not watched by Sentinels
	 */
	public RedisSentinels sentinels() {
		if (!(this.server instanceof RedisSentinels sentinels)) {
			throw new IllegalStateException("No Sentinels: annotate the test class with @WithRedis(sentinel = true)");
		}
		return sentinels;
	}

	/**
	 * Delete every key under {@link #keyPrefix()}.
	 * @return the number of keys deleted
	 */
	public long deleteKeys() {
		return RedisInfo.deleteKeys(this.server.nodeUris(), this.server.caCertificate().orElse(null), this.keyPrefix);
	}

}

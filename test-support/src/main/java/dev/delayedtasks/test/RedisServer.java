package dev.delayedtasks.test;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;

/**
 * A Redis server that tests, the sample or benchmarks talk to. Closing it stops the
 * server when this process started it, and does nothing for a server it only connected
 * to.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public interface RedisServer extends AutoCloseable {

	/**
	 * The kind of server, never {@link RedisKind#ANY}.
	 * @return the kind
	 */
	RedisKind kind();

	/**
	 * Connection details, including credentials and database when the server was given by
	 * a URL.
	 * @return the URI
	 */
	RedisURI uri();

	/**
	 * Every node holding data: the server itself, or each running node of a cluster. Key
	 * clean-up scans them all, because a cluster node only scans its own slots.
	 * @return the node URIs
	 */
	default List<RedisURI> nodeUris() {
		return List.of(uri());
	}

	/**
	 * The Redis version the server reports in {@code INFO server}
	 * ({@code redis_version}), which is what decides the commands it has.
	 * @return the version, for example {@code 7.0.15}
	 */
	String version();

	/**
	 * The server's name and own version next to the Redis version it reports: for example
	 * Valkey 8.0.1, whose {@link #version()} is {@code 7.2.4}.
	 * @return the server version; by default a Redis of {@link #version()}
	 */
	default ServerVersion serverVersion() {
		return ServerVersion.redis(version());
	}

	/**
	 * A one-line description for logs: kind, version, address and process.
	 * @return the description
	 */
	String describe();

	/**
	 * The Redis URL of this server, for {@code spring.data.redis.url}: {@code rediss://}
	 * for a server that speaks TLS, with the credentials of {@link #uri()} when it has
	 * any.
	 * @return the URL
	 */
	default String url() {
		// Built by hand: RedisURI#toURI drops the default port, which Spring Boot then
		// reads as -1.
		RedisURI uri = uri();
		RedisCredentials credentials = uri.getCredentialsProvider().resolveCredentials().block();
		String userInfo = "";
		if (credentials != null && credentials.hasPassword()) {
			String username = credentials.hasUsername() ? credentials.getUsername() : "";
			userInfo = encoded(username) + ":" + encoded(new String(credentials.getPassword())) + "@";
		}
		return (uri.isSsl() ? "rediss://" : "redis://") + userInfo + uri.getHost() + ":" + uri.getPort();
	}

	private static String encoded(String userInfoPart) {
		return URLEncoder.encode(userInfoPart, StandardCharsets.UTF_8).replace("+", "%20");
	}

	/**
	 * The certificate (PEM) of the CA that signed this server's TLS certificate, for a
	 * server made with {@link TestCertificates}.
	 * @return the file, or empty when the server speaks plain TCP or its CA is not known
	 * here
	 */
	default Optional<Path> caCertificate() {
		return Optional.empty();
	}

	@Override
	void close();

}

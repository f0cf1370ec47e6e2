package dev.delayedtasks.test;

import io.lettuce.core.RedisURI;

/**
 * A Redis server somebody else runs, given by a URL: never stopped, never disturbed
 * beyond a test's own keys.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class ExternalRedis implements RedisServer {

	private final String url;

	private final RedisURI uri;

	private final ServerVersion version;

	ExternalRedis(String url) {
		this.url = url;
		this.uri = RedisURI.create(url);
		this.version = RedisInfo.version(this.uri, null);
	}

	@Override
	public RedisKind kind() {
		return RedisKind.URL;
	}

	@Override
	public RedisURI uri() {
		return this.uri;
	}

	@Override
	public String url() {
		return this.url;
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
		return this.version.label() + " at " + this.uri.getHost() + ":" + this.uri.getPort() + " (db "
				+ this.uri.getDatabase() + ", from " + RedisServers.URL_VARIABLE + ")";
	}

	@Override
	public void close() {
	}

}

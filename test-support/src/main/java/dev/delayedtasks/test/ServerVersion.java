package dev.delayedtasks.test;

import java.util.Map;
import java.util.stream.Collectors;

/**
 * What a server says it is in {@code INFO server}: its name, its own version and the
 * Redis version it is compatible with. For Redis the two versions are the same; Valkey
 * reports {@code server_name:valkey} and {@code valkey_version:8.0.1} next to
 * {@code redis_version:7.2.4}, the Redis release whose commands it implements.
 *
 * @param name the server's name, lower case: {@code redis} or {@code valkey}
 * @param version the server's own version, for example {@code 8.0.1} for Valkey
 * @param redisVersion the {@code redis_version} it reports, for example {@code 7.2.4}
 * @author delayed-tasks
 * @since 0.1.0
 */
public record ServerVersion(String name, String version, String redisVersion) {

	private static final String UNKNOWN = "unknown";

	/**
	 * A Redis server of the given version.
	 * @param version the version
	 * @return the server version
	 */
	public static ServerVersion redis(String version) {
		return new ServerVersion("redis", version, version);
	}

	/**
	 * Read the {@code INFO server} section. A server that names itself in
	 * {@code server_name} reports its own version as {@code <name>_version}; one that
	 * does not (Redis does not) is Redis.
	 * @param info the reply to {@code INFO server}
	 * @return the server version
	 */
	public static ServerVersion parse(String info) {
		Map<String, String> fields = info.lines()
			.filter((line) -> line.indexOf(':') > 0)
			.collect(Collectors.toMap((line) -> line.substring(0, line.indexOf(':')),
					(line) -> line.substring(line.indexOf(':') + 1).trim(), (first, second) -> first));
		String redisVersion = fields.getOrDefault("redis_version", UNKNOWN);
		String name = fields.getOrDefault("server_name", "redis");
		return new ServerVersion(name, fields.getOrDefault(name + "_version", redisVersion), redisVersion);
	}

	/**
	 * The name and version as one word, for {@value RedisServers#USED_FILE} and logs: for
	 * example {@code redis-7.0.15} or {@code valkey-8.0.1}.
	 * @return the label
	 */
	public String label() {
		return this.name + "-" + this.version;
	}

}

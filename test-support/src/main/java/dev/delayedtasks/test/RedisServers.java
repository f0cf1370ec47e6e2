package dev.delayedtasks.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Resolves a real Redis: the URL in {@value #URL_VARIABLE}, else a Testcontainers Redis
 * when Docker answers, else a {@code redis-server} on the {@code PATH}, else the Redis
 * 6.2 binary from the {@code embedded-redis} artifact; a {@code valkey-server} on the
 * {@code PATH} only when {@link RedisKind#VALKEY} is asked for. Logs which one it chose
 * and why the earlier ones were passed over.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisServers {

	/**
	 * Environment variable naming a shared Redis, for example
	 * {@code redis://127.0.0.1:6379}.
	 */
	public static final String URL_VARIABLE = "DELAYED_TASKS_TEST_REDIS_URL";

	/**
	 * System property (or environment variable {@code DELAYED_TASKS_TEST_REDIS_KIND})
	 * forcing one kind.
	 */
	public static final String KIND_PROPERTY = "delayed-tasks.test.redis.kind";

	/**
	 * The file in the pidfile directory where {@link RedisServerExtension} records which
	 * Redis each test class got, one line each:
	 * {@code redis_version=7.0.15 server=redis-7.0.15 kind=PATH_BINARY class=com.example.SomeTests},
	 * where {@code server} is the {@link ServerVersion#label() name and own version}
	 * ({@code valkey-8.0.1} for Valkey, whose {@code redis_version} is 7.2.4).
	 */
	public static final String USED_FILE = "servers-used.txt";

	private static final String KIND_VARIABLE = "DELAYED_TASKS_TEST_REDIS_KIND";

	private static final Log logger = LogFactory.getLog(RedisServers.class);

	private final Map<String, String> environment;

	private final PidFiles pidFiles;

	private final RedisBinaries binaries;

	private @Nullable Boolean dockerAvailable;

	/**
	 * Resolve from the given environment, keeping pidfiles and extracted binaries in
	 * {@code pidFiles}' directory.
	 * @param environment the environment variables to read
	 * @param pidFiles the pidfiles of started processes
	 */
	public RedisServers(Map<String, String> environment, PidFiles pidFiles) {
		this.environment = Map.copyOf(environment);
		this.pidFiles = pidFiles;
		this.binaries = new RedisBinaries(environment.get("PATH"), pidFiles.directory().resolve("bin"));
	}

	/**
	 * Resolve from this process's environment with pidfiles under
	 * {@code target/redis-servers}, first stopping servers that a killed JVM left behind.
	 * @return the resolver
	 */
	public static RedisServers fromEnvironment() {
		PidFiles pidFiles = PidFiles.inTarget();
		pidFiles.reapOrphans();
		return new RedisServers(System.getenv(), pidFiles);
	}

	/**
	 * The kind forced by the {@value #KIND_PROPERTY} system property or
	 * {@code DELAYED_TASKS_TEST_REDIS_KIND}.
	 * @return the forced kind, or {@code null}
	 */
	public @Nullable RedisKind forcedKind() {
		String value = System.getProperty(KIND_PROPERTY);
		return RedisKind.parse((value != null) ? value : this.environment.get(KIND_VARIABLE));
	}

	/**
	 * A server that many tests may share (each isolates itself by key prefix).
	 * @param kind the kind wanted, or {@link RedisKind#ANY}
	 * @return the server; closing it stops it when it was started here
	 * @throws RedisUnavailableException if no server of that kind can be had here
	 */
	public RedisServer shared(RedisKind kind) {
		Optional<String> url = url();
		if (kind == RedisKind.URL || (kind == RedisKind.ANY && url.isPresent())) {
			String value = url.orElseThrow(() -> new RedisUnavailableException(URL_VARIABLE + " is not set"));
			return chosen(new ExternalRedis(value), URL_VARIABLE + " is set");
		}
		return startPrivate(kind, List.of());
	}

	/**
	 * A server of this caller's own, started here, never the shared URL: for tests that
	 * restart, flush, pause or reconfigure Redis.
	 * @param kind the kind wanted, or {@link RedisKind#ANY} (Docker, then {@code PATH},
	 * then the bundled binary)
	 * @param extraArguments further {@code redis-server} arguments (not supported for
	 * Docker, which is then skipped)
	 * @return the server
	 * @throws RedisUnavailableException if no server of that kind can be started here
	 */
	public RedisServer startPrivate(RedisKind kind, List<String> extraArguments) {
		List<String> passedOver = new ArrayList<>();
		if (kind == RedisKind.URL) {
			throw new RedisUnavailableException("A private Redis cannot come from " + URL_VARIABLE
					+ ": a shared server must never be restarted or reconfigured by a test");
		}
		if ((kind == RedisKind.ANY && extraArguments.isEmpty()) || kind == RedisKind.DOCKER) {
			String reason = dockerUnavailableReason();
			if (reason == null) {
				return chosen(DockerRedis.start(), "Docker answers");
			}
			if (kind == RedisKind.DOCKER) {
				throw new RedisUnavailableException(reason);
			}
			passedOver.add(reason);
		}
		return startProcess((kind == RedisKind.ANY || kind == RedisKind.DOCKER) ? RedisKind.ANY : kind, extraArguments,
				passedOver);
	}

	/**
	 * A {@code redis-server} (or {@code valkey-server}) process of this caller's own, for
	 * tests that need to signal or restart the process.
	 * @param kind {@link RedisKind#ANY}, {@link RedisKind#PATH_BINARY},
	 * {@link RedisKind#BUNDLED_6_2} or {@link RedisKind#VALKEY}
	 * @param extraArguments further {@code redis-server} arguments
	 * @return the running process
	 */
	public RedisProcess startProcess(RedisKind kind, List<String> extraArguments) {
		return startProcess(kind, extraArguments, new ArrayList<>());
	}

	/**
	 * A {@code redis-server} process of this caller's own that accepts TLS connections
	 * only, with a certificate signed by a CA made for it by {@code openssl} (see
	 * {@link RedisServer#caCertificate()}).
	 * @param kind {@link RedisKind#ANY}, {@link RedisKind#PATH_BINARY},
	 * {@link RedisKind#BUNDLED_6_2} or {@link RedisKind#VALKEY} (containers are not
	 * supported)
	 * @param extraArguments further {@code redis-server} arguments
	 * @return the running process
	 * @throws RedisUnavailableException if {@code openssl} or a {@code redis-server} with
	 * TLS is missing here
	 */
	public RedisProcess startTls(RedisKind kind, List<String> extraArguments) {
		if (kind == RedisKind.URL || kind == RedisKind.DOCKER) {
			throw new RedisUnavailableException("A TLS Redis is always a redis-server process of this JVM's own, "
					+ "started with a test CA, never " + kind);
		}
		Path directory;
		try {
			directory = Files.createTempDirectory(this.pidFiles.directory(), "tls-");
		}
		catch (IOException ex) {
			throw new RedisStartFailedException("Could not create a directory for test certificates under "
					+ this.pidFiles.directory() + ": " + ex.getMessage(), ex);
		}
		return startProcess(kind, extraArguments, new ArrayList<>(), TestCertificates.create(directory));
	}

	/**
	 * A Redis Cluster of this caller's own, of {@code redis-server} processes joined with
	 * the cluster commands and healthy when this returns.
	 * @param kind {@link RedisKind#PATH_BINARY}, {@link RedisKind#BUNDLED_6_2} or
	 * {@link RedisKind#VALKEY}; any other kind means the first of the first two that is
	 * available (a URL or a container cannot give a cluster of this caller's own)
	 * @param masters the number of masters
	 * @param replicasPerMaster the number of replicas of each master
	 * @return the cluster
	 */
	public RedisCluster startCluster(RedisKind kind, int masters, int replicasPerMaster) {
		RedisKind processKind = processKind(kind);
		return chosen(
				RedisCluster.start((arguments) -> startProcess(processKind, arguments), masters, replicasPerMaster),
				"cluster of " + ((processKind == RedisKind.VALKEY) ? "valkey-server" : "redis-server") + " processes");
	}

	/**
	 * A master, a replica and three Sentinels of this caller's own, all
	 * {@code redis-server} (or {@code valkey-server}) processes of one binary (a Sentinel
	 * is that binary started with {@code --sentinel}).
	 * @param kind {@link RedisKind#PATH_BINARY}, {@link RedisKind#BUNDLED_6_2} or
	 * {@link RedisKind#VALKEY}; any other kind means the first of the first two that is
	 * available
	 * @return the group, with every Sentinel aware of the replica and of each other
	 * @throws RedisUnavailableException if there is no binary of that kind here
	 */
	public RedisSentinels startSentinels(RedisKind kind) {
		Binary binary = binary(processKind(kind), new ArrayList<>());
		return chosen(
				RedisSentinels.start((config, arguments) -> RedisProcess.start(binary.kind(), binary.path(),
						this.pidFiles, config, arguments, null)),
				"Sentinels of " + binary.path().getFileName() + " processes, " + binary.reason());
	}

	private RedisProcess startProcess(RedisKind kind, List<String> extraArguments, List<String> passedOver) {
		return startProcess(kind, extraArguments, passedOver, null);
	}

	private RedisProcess startProcess(RedisKind kind, List<String> extraArguments, List<String> passedOver,
			@Nullable TestCertificates certificates) {
		Binary binary = binary(kind, passedOver);
		return chosen(
				RedisProcess.start(binary.kind(), binary.path(), this.pidFiles, null, extraArguments, certificates),
				binary.reason());
	}

	private Binary binary(RedisKind kind, List<String> passedOver) {
		if (kind == RedisKind.VALKEY) {
			// Asked for by name only: a run that wants Redis never gets Valkey by
			// accident.
			return this.binaries.onPath(RedisBinaries.VALKEY_SERVER)
				.map((binary) -> new Binary(RedisKind.VALKEY, binary, "valkey-server found on PATH"))
				.orElseThrow(() -> new RedisUnavailableException("No valkey-server on PATH"));
		}
		if (kind == RedisKind.ANY || kind == RedisKind.PATH_BINARY) {
			Optional<Path> binary = this.binaries.onPath();
			if (binary.isPresent()) {
				return new Binary(RedisKind.PATH_BINARY, binary.get(),
						withPassedOver("redis-server found on PATH", passedOver));
			}
			if (kind == RedisKind.PATH_BINARY) {
				throw new RedisUnavailableException("No redis-server on PATH");
			}
			passedOver.add("no redis-server on PATH");
		}
		if (kind == RedisKind.ANY || kind == RedisKind.BUNDLED_6_2) {
			Optional<Path> binary = this.binaries.bundled();
			if (binary.isPresent()) {
				return new Binary(RedisKind.BUNDLED_6_2, binary.get(),
						withPassedOver("Redis 6.2 binary from com.github.codemonstur:embedded-redis", passedOver));
			}
			passedOver.add("embedded-redis has no binary for " + System.getProperty("os.name") + "/"
					+ System.getProperty("os.arch"));
		}
		throw new RedisUnavailableException("No Redis available: " + String.join("; ", passedOver));
	}

	/**
	 * The kind of server process to start for {@code kind}: a URL or a container cannot
	 * give a process of this caller's own, so those mean any binary.
	 * @param kind the kind asked for
	 * @return the kind of process to start
	 */
	static RedisKind processKind(RedisKind kind) {
		return (kind == RedisKind.BUNDLED_6_2 || kind == RedisKind.PATH_BINARY || kind == RedisKind.VALKEY) ? kind
				: RedisKind.ANY;
	}

	/**
	 * Append a line saying which Redis a test class got to {@value #USED_FILE} in the
	 * pidfile directory, for CI to report the versions a run really used.
	 * @param server the server
	 * @param user the test class
	 */
	void recordUse(RedisServer server, String user) {
		String line = "redis_version=" + server.version() + " server=" + server.serverVersion().label() + " kind="
				+ server.kind() + " class=" + user + "\n";
		try {
			// One small append per line: test JVMs running at once do not interleave
			// within a line.
			Files.writeString(this.pidFiles.directory().resolve(USED_FILE), line, StandardOpenOption.CREATE,
					StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			logger.warn("Could not record the Redis used by " + user + ": " + ex.getMessage());
		}
	}

	/**
	 * The shared URL from {@value #URL_VARIABLE}, if set.
	 * @return the URL
	 */
	public Optional<String> url() {
		return Optional.ofNullable(this.environment.get(URL_VARIABLE)).filter((value) -> !value.isBlank());
	}

	/**
	 * Why Docker cannot be used here, or {@code null} when it can.
	 * @return the reason, or {@code null}
	 */
	public @Nullable String dockerUnavailableReason() {
		if (!isPresent("org.testcontainers.DockerClientFactory")) {
			return "Testcontainers is not on the class path";
		}
		if (this.dockerAvailable == null) {
			this.dockerAvailable = DockerRedis.dockerAvailable();
		}
		return this.dockerAvailable ? null : "no Docker engine answers";
	}

	private static boolean isPresent(String className) {
		try {
			Class.forName(className, false, RedisServers.class.getClassLoader());
			return true;
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return false;
		}
	}

	private static String withPassedOver(String reason, List<String> passedOver) {
		return passedOver.isEmpty() ? reason : reason + "; passed over: " + String.join(", ", passedOver);
	}

	private static <S extends RedisServer> S chosen(S server, String reason) {
		logger.info("Using " + server.describe() + " (" + reason + ")");
		return server;
	}

	private record Binary(RedisKind kind, Path path, String reason) {

	}

}

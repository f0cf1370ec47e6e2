package dev.delayedtasks.test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisURI;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * A {@code redis-server} process started on a free loopback port, recorded in a pidfile
 * so that a later run can stop it if this JVM is killed before it can. With
 * {@link TestCertificates} it listens on that port for TLS only, with no plain port at
 * all, so a client that gets through has spoken TLS.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisProcess implements RedisServer {

	private static final Log logger = LogFactory.getLog(RedisProcess.class);

	private static final int START_ATTEMPTS = 3;

	/** What {@code redis-server} logs when its port was taken before it could bind it. */
	private static final String PORT_TAKEN = "Address already in use";

	private final RedisKind kind;

	private final Path binary;

	private final List<String> command;

	private volatile Process process;

	private final int port;

	private final Path workDirectory;

	private final PidFiles pidFiles;

	private final @Nullable TestCertificates certificates;

	private final ServerVersion version;

	private final Thread shutdownHook;

	private RedisProcess(RedisKind kind, Path binary, List<String> command, Process process, int port,
			Path workDirectory, PidFiles pidFiles, @Nullable TestCertificates certificates) {
		this.kind = kind;
		this.binary = binary;
		this.command = command;
		this.process = process;
		this.port = port;
		this.workDirectory = workDirectory;
		this.pidFiles = pidFiles;
		this.certificates = certificates;
		this.version = RedisInfo.version(uri(), caCertificate().orElse(null));
		this.shutdownHook = new Thread(this::stopProcess, "redis-server-" + port + "-stopper");
		Runtime.getRuntime().addShutdownHook(this.shutdownHook);
	}

	/**
	 * Start {@code binary} on a free port with persistence off and the given extra
	 * arguments.
	 * @param kind the kind to report
	 * @param binary the {@code redis-server} executable
	 * @param pidFiles where the process is recorded
	 * @param extraArguments further {@code redis-server} arguments, for example
	 * {@code --appendonly yes}
	 * @return the running server
	 */
	public static RedisProcess start(RedisKind kind, Path binary, PidFiles pidFiles, List<String> extraArguments) {
		return start(kind, binary, pidFiles, null, extraArguments, null);
	}

	/**
	 * Start {@code binary} on a free port with persistence off, an optional configuration
	 * file and the given extra arguments, accepting only TLS connections when
	 * {@code certificates} are given.
	 * @param kind the kind to report
	 * @param binary the {@code redis-server} executable
	 * @param pidFiles where the process is recorded
	 * @param config the content of a configuration file, written to the working directory
	 * and passed first (for modes that rewrite it, such as {@code --sentinel}), or
	 * {@code null} for none
	 * @param extraArguments further {@code redis-server} arguments
	 * @param certificates the server's certificates, or {@code null} for plain TCP
	 * @return the running server
	 */
	public static RedisProcess start(RedisKind kind, Path binary, PidFiles pidFiles, @Nullable String config,
			List<String> extraArguments, @Nullable TestCertificates certificates) {
		RedisStartFailedException lastFailure = null;
		for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
			int port = freePort();
			try {
				return startOn(kind, binary, port, pidFiles, config, extraArguments, certificates);
			}
			catch (RedisStartFailedException ex) {
				// Another process may have taken the free port between probing and
				// binding it; any other failure would only repeat itself.
				if (ex.getMessage() == null || !ex.getMessage().contains(PORT_TAKEN)) {
					throw ex;
				}
				lastFailure = ex;
			}
		}
		throw lastFailure;
	}

	private static RedisProcess startOn(RedisKind kind, Path binary, int port, PidFiles pidFiles,
			@Nullable String config, List<String> extraArguments, @Nullable TestCertificates certificates) {
		Path workDirectory = pidFiles.directory().resolve("redis-" + port);
		List<String> command = new ArrayList<>(List.of(binary.toString()));
		if (config != null) {
			// redis-server reads a configuration file only as its first argument.
			command.add(workDirectory.resolve("redis.conf").toString());
		}
		command.addAll(listenArguments(port, certificates));
		command.addAll(List.of("--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir",
				workDirectory.toString()));
		command.addAll(extraArguments);
		try {
			Files.createDirectories(workDirectory);
			if (config != null) {
				Files.writeString(workDirectory.resolve("redis.conf"), config);
			}
		}
		catch (IOException ex) {
			throw new RedisStartFailedException("Could not create " + workDirectory + ": " + ex.getMessage(), ex);
		}
		Process process = launch(command, port, workDirectory, pidFiles, certificates);
		try {
			return new RedisProcess(kind, binary, List.copyOf(command), process, port, workDirectory, pidFiles,
					certificates);
		}
		catch (RuntimeException ex) {
			// The constructor asks the server its version; no shutdown hook guards it
			// yet.
			process.destroyForcibly();
			pidFiles.remove(port);
			throw new RedisStartFailedException("redis-server on port " + port + " answered PING but then failed: "
					+ ex.getMessage() + ReadinessProbe.logTail(workDirectory.resolve("redis.log")), ex);
		}
	}

	private static List<String> listenArguments(int port, @Nullable TestCertificates certificates) {
		if (certificates == null) {
			return List.of("--port", Integer.toString(port));
		}
		// Port 0 turns the plain listener off. Clients need no certificate of their own:
		// the tests are about the server's identity and an encrypted channel.
		return List.of("--port", "0", "--tls-port", Integer.toString(port), "--tls-cert-file",
				certificates.serverCertificate().toString(), "--tls-key-file", certificates.serverKey().toString(),
				"--tls-ca-cert-file", certificates.caCertificate().toString(), "--tls-auth-clients", "no");
	}

	private static Process launch(List<String> command, int port, Path workDirectory, PidFiles pidFiles,
			@Nullable TestCertificates certificates) {
		Path log = workDirectory.resolve("redis.log");
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
				.start();
			pidFiles.record(port, process.pid());
			try {
				ReadinessProbe probe = (certificates != null) ? new ReadinessProbe(certificates.socketFactory())
						: ReadinessProbe.plain();
				probe.await(process, port, log);
				return process;
			}
			catch (RuntimeException ex) {
				process.destroyForcibly();
				pidFiles.remove(port);
				if (certificates != null && withoutTls(ReadinessProbe.tail(log))) {
					throw new RedisUnavailableException(command.get(0)
							+ " was built without TLS support (BUILD_TLS=yes); TLS tests need one that has it");
				}
				throw ex;
			}
		}
		catch (IOException ex) {
			throw new RedisStartFailedException("Could not start " + command.get(0) + ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * Whether a server's log says it refused the TLS options because it was built without
	 * TLS: it then knows no {@code tls-*} directive.
	 * @param log the last lines of its log
	 * @return whether TLS support is missing
	 */
	static boolean withoutTls(List<String> log) {
		boolean tlsDirective = log.stream().anyMatch((line) -> line.startsWith(">>> 'tls-"));
		boolean unknown = log.stream().anyMatch((line) -> line.contains("Bad directive"));
		return tlsDirective && unknown;
	}

	/**
	 * The last lines of the server's log, as a suffix for a failure message.
	 * @return the log's name and its last lines
	 */
	String logTail() {
		return ReadinessProbe.logTail(this.workDirectory.resolve("redis.log"));
	}

	/**
	 * Kill the server with {@code SIGKILL}, as a crash would: no shutdown, no final save.
	 * What it keeps is what its persistence settings wrote before the kill.
	 */
	public synchronized void kill() {
		this.process.destroyForcibly();
		try {
			if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException("redis-server on port " + this.port + " did not die of SIGKILL");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while killing redis-server on port " + this.port, ex);
		}
	}

	/**
	 * Start the server again after {@link #kill()}: same port, same arguments, same
	 * working directory, so it loads whatever it persisted there.
	 */
	public synchronized void restart() {
		if (this.process.isAlive()) {
			throw new IllegalStateException("redis-server on port " + this.port + " is still running");
		}
		this.process = launch(this.command, this.port, this.workDirectory, this.pidFiles, this.certificates);
	}

	/**
	 * Whether a plain-TCP server answers PING on {@code port}.
	 * @param port the port on the loopback address
	 * @return whether it answered
	 */
	static boolean ping(int port) {
		return ReadinessProbe.plain().ping(port);
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			socket.setReuseAddress(true);
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new RedisStartFailedException("No free port: " + ex.getMessage(), ex);
		}
	}

	@Override
	public RedisKind kind() {
		return this.kind;
	}

	@Override
	public RedisURI uri() {
		return RedisURI.builder().withHost("127.0.0.1").withPort(this.port).withSsl(this.certificates != null).build();
	}

	@Override
	public Optional<Path> caCertificate() {
		return Optional.ofNullable(this.certificates).map(TestCertificates::caCertificate);
	}

	/**
	 * The address, {@code 127.0.0.1:port}.
	 * @return the address
	 */
	public String address() {
		return "127.0.0.1:" + this.port;
	}

	/**
	 * The port the server listens on.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * The operating-system process of the server, for fault tests that signal it.
	 * @return the process
	 */
	public Process process() {
		return this.process;
	}

	/**
	 * The server's working directory ({@code --dir}), where AOF and RDB files go.
	 * @return the directory
	 */
	public Path workDirectory() {
		return this.workDirectory;
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
		return this.version.label() + " (" + this.kind + ", " + this.binary + ") on 127.0.0.1:" + this.port
				+ ((this.certificates != null) ? " (TLS only)" : "") + " (pid " + this.process.pid() + ")";
	}

	@Override
	public void close() {
		stopProcess();
		try {
			Runtime.getRuntime().removeShutdownHook(this.shutdownHook);
		}
		catch (IllegalStateException ex) {
			// The JVM is already shutting down and runs the hook itself.
		}
	}

	private void stopProcess() {
		if (this.process.isAlive()) {
			this.process.destroy();
			try {
				if (!this.process.waitFor(5, TimeUnit.SECONDS)) {
					this.process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
				}
			}
			catch (InterruptedException ex) {
				this.process.destroyForcibly();
				Thread.currentThread().interrupt();
			}
			logger.info("Stopped " + describe());
		}
		this.pidFiles.remove(this.port);
	}

}

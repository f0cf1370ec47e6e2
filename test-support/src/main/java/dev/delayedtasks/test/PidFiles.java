package dev.delayedtasks.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Pidfiles of the {@code redis-server} processes this JVM started, so that the next run
 * can stop what a killed JVM left behind (Java cannot give a child process a parent-death
 * signal).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class PidFiles {

	private static final Log logger = LogFactory.getLog(PidFiles.class);

	private final Path directory;

	/**
	 * Use {@code directory} for pidfiles and server working directories.
	 * @param directory the directory, created when missing
	 */
	public PidFiles(Path directory) {
		this.directory = directory.toAbsolutePath();
		try {
			Files.createDirectories(this.directory);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The default location, {@code target/redis-servers} under the working directory.
	 * @return the pidfiles
	 */
	public static PidFiles inTarget() {
		return new PidFiles(Path.of("target", "redis-servers"));
	}

	/**
	 * The directory holding the pidfiles.
	 * @return the directory
	 */
	public Path directory() {
		return this.directory;
	}

	void record(int port, long redisPid) {
		String content = "redis=" + redisPid + "\nowner=" + ProcessHandle.current().pid() + "\n";
		try {
			Files.writeString(pidFile(port), content);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	void remove(int port) {
		try {
			Files.deleteIfExists(pidFile(port));
		}
		catch (IOException ex) {
			logger.warn("Could not delete " + pidFile(port) + ": " + ex.getMessage());
		}
	}

	/**
	 * Stop every recorded {@code redis-server} whose owning JVM is gone, and delete its
	 * pidfile.
	 * @return the number of processes stopped
	 */
	public int reapOrphans() {
		int reaped = 0;
		try (Stream<Path> files = Files.list(this.directory)) {
			for (Path file : files.filter((path) -> path.getFileName().toString().endsWith(".pid")).toList()) {
				reaped += reap(file);
			}
		}
		catch (IOException ex) {
			logger.warn("Could not list " + this.directory + ": " + ex.getMessage());
		}
		return reaped;
	}

	private int reap(Path file) throws IOException {
		List<String> lines = Files.readAllLines(file);
		long redisPid = value(lines, "redis=");
		long ownerPid = value(lines, "owner=");
		if (ownerPid > 0 && ProcessHandle.of(ownerPid).map(ProcessHandle::isAlive).orElse(false)) {
			return 0;
		}
		int reaped = 0;
		Optional<ProcessHandle> redis = ProcessHandle.of(redisPid);
		if (redis.isPresent() && redis.get().isAlive() && isRedisServer(redis.get())) {
			redis.get().destroyForcibly();
			logger.info("Stopped redis-server pid " + redisPid + " left behind by JVM " + ownerPid);
			reaped = 1;
		}
		Files.deleteIfExists(file);
		return reaped;
	}

	private static boolean isRedisServer(ProcessHandle process) {
		// Debian links redis-server to redis-check-rdb, so the executable's name alone
		// does not say "redis-server".
		ProcessHandle.Info info = process.info();
		return info.commandLine().map((line) -> line.contains("redis")).orElse(false)
				|| info.command().map((command) -> command.contains("redis")).orElse(false);
	}

	private static long value(List<String> lines, String prefix) {
		return lines.stream()
			.filter((line) -> line.startsWith(prefix))
			.mapToLong((line) -> Long.parseLong(line.substring(prefix.length()).trim()))
			.findFirst()
			.orElse(-1);
	}

	private Path pidFile(int port) {
		return this.directory.resolve("redis-" + port + ".pid");
	}

}

package dev.delayedtasks.benchmarks;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.system.ApplicationHome;

/**
 * The soak's worker processes: this application again, in the
 * {@value SoakWorkerRunner#PROFILE} profile, each in a JVM of its own with its output in
 * a log file. They are killed with SIGKILL and replaced; stopping closes their standard
 * input, which ends them gracefully (and ends them too when this process dies).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class SoakWorkers implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(SoakWorkers.class);

	private static final long STOP_TIMEOUT_SECONDS = 40;

	private final List<String> command;

	private final String logPrefix;

	private final List<Process> processes = new ArrayList<>();

	private int started;

	/**
	 * Create the workers of a run; none is started yet.
	 * @param redisUrl the Redis the coordinator uses
	 * @param keyPrefix the run's key prefix
	 * @param concurrency the handler concurrency of each worker
	 * @param logPrefix where the logs go: {@code <logPrefix>worker-<n>.log}
	 */
	SoakWorkers(String redisUrl, String keyPrefix, String concurrency, String logPrefix) {
		this.command = command(redisUrl, keyPrefix, concurrency);
		this.logPrefix = logPrefix;
	}

	private static List<String> command(String redisUrl, String keyPrefix, String concurrency) {
		String java = ProcessHandle.current()
			.info()
			.command()
			.orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		// A small heap and the C1 compiler only: the machine's cores are shared by Redis,
		// the coordinator and every worker.
		List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:TieredStopAtLevel=1"));
		File source = new ApplicationHome(BenchmarkApplication.class).getSource();
		if (source != null && source.isFile()) {
			command.addAll(List.of("-jar", source.getAbsolutePath()));
		}
		else {
			// Classes directory (tests, an IDE): the class path of this JVM.
			command.addAll(List.of("-cp", System.getProperty("java.class.path"), BenchmarkApplication.class.getName()));
		}
		command.addAll(List.of("--spring.profiles.active=" + SoakWorkerRunner.PROFILE, "--redis-url=" + redisUrl,
				"--delayed-tasks.key-prefix=" + keyPrefix, "--bench.soak.concurrency=" + concurrency));
		return List.copyOf(command);
	}

	/**
	 * Start a worker.
	 * @return its process
	 */
	synchronized Process startOne() {
		Path log = Path.of(this.logPrefix + "worker-" + (++this.started) + ".log");
		try {
			Files.createDirectories(log.toAbsolutePath().getParent());
			Process process = new ProcessBuilder(this.command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
				.start();
			this.processes.add(process);
			logger.info("Soak: started worker " + this.started + " (pid " + process.pid() + "), log " + log);
			return process;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start a soak worker: " + this.command, ex);
		}
	}

	/**
	 * Kill a random live worker with SIGKILL, wait until it is gone, and start another.
	 * @param random picks the worker
	 * @return the process killed and when, or {@code null} when no worker is alive
	 */
	synchronized @Nullable Killed replaceOne(SplittableRandom random) {
		List<Process> alive = this.processes.stream().filter(Process::isAlive).toList();
		if (alive.isEmpty()) {
			return null;
		}
		Process victim = alive.get(random.nextInt(alive.size()));
		long killedAt = System.currentTimeMillis();
		victim.destroyForcibly();
		try {
			if (!victim.waitFor(10, TimeUnit.SECONDS)) {
				logger.warn("Soak: worker " + victim.pid() + " still alive 10 s after SIGKILL");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.processes.remove(victim);
		startOne();
		return new Killed(victim.pid(), killedAt);
	}

	synchronized int alive() {
		return (int) this.processes.stream().filter(Process::isAlive).count();
	}

	/**
	 * Stop every worker: close its input, so that it shuts down gracefully, and kill it
	 * if it is still alive after a while.
	 */
	@Override
	public synchronized void close() {
		for (Process process : this.processes) {
			try {
				process.getOutputStream().close();
			}
			catch (IOException ex) {
				// Already gone.
			}
		}
		for (Process process : this.processes) {
			try {
				if (!process.waitFor(STOP_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
					logger.warn("Soak: worker " + process.pid() + " did not stop within " + STOP_TIMEOUT_SECONDS
							+ " s: killing it");
					process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
				}
			}
			catch (InterruptedException ex) {
				process.destroyForcibly();
				Thread.currentThread().interrupt();
			}
		}
		this.processes.clear();
	}

	/**
	 * A worker killed with SIGKILL.
	 *
	 * @param pid its process id
	 * @param atMillis when, local epoch milliseconds
	 */
	record Killed(long pid, long atMillis) {

	}

}

package dev.delayedtasks.internal.worker;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.test.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A {@link CrashTestWorker} in a JVM of its own, for fault tests that kill or stop it.
 * Its output lines are collected (and echoed with a prefix) so that a test can see what
 * the child started, finished and had rejected. Closing it kills the child.
 */
final class ChildWorker implements AutoCloseable {

	private final String name;

	private final Process process;

	/** Appended to by the reader thread; a child may print tens of thousands of lines. */
	private final Queue<String> lines = new ConcurrentLinkedQueue<>();

	private volatile long exitedAtMillis;

	private ChildWorker(String name, Process process) {
		this.name = name;
		this.process = process;
		process.onExit().thenRun(() -> this.exitedAtMillis = System.currentTimeMillis());
		Thread reader = new Thread(this::readOutput, name + "-output");
		reader.setDaemon(true);
		reader.start();
	}

	/**
	 * Start a child worker and wait until its handler runs.
	 * @param name a name for its output lines
	 * @param redis where it connects
	 * @param queue the queue it handles
	 * @param concurrency its handler's concurrency
	 * @param properties further Spring properties, {@code name=value}, which win over the
	 * {@link ShortLeases short leases} every child gets
	 * @return the running child
	 */
	static ChildWorker start(String name, TestRedis redis, String queue, int concurrency, String... properties)
			throws IOException {
		return startMain(name, redis, CrashTestWorker.class, "@@READY",
				List.of("--crash.queue=" + queue, "--crash.concurrency=" + concurrency), properties);
	}

	/**
	 * Start a child of another application class, which prints {@code ready} once
	 * started, and wait until it has.
	 * @param name a name for its output lines
	 * @param redis where it connects
	 * @param main the application's class, with a {@code main} method
	 * @param ready the line it prints once started
	 * @param arguments its own arguments
	 * @param properties further Spring properties, {@code name=value}, which win over the
	 * {@link ShortLeases short leases} every child gets
	 * @return the running child
	 */
	static ChildWorker startMain(String name, TestRedis redis, Class<?> main, String ready, List<String> arguments,
			String... properties) throws IOException {
		String java = ProcessHandle.current()
			.info()
			.command()
			.orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp",
				System.getProperty("java.class.path"), main.getName(),
				"--delayed-tasks.key-prefix=" + redis.keyPrefix(), "--spring.main.banner-mode=off",
				"--logging.level.root=WARN", "--logging.level.dev.delayedtasks=INFO"));
		command.addAll(arguments);
		for (String property : redis.connectionProperties()) {
			command.add("--" + property);
		}
		Set<String> overridden = new HashSet<>();
		for (String property : properties) {
			overridden.add(property.substring(0, property.indexOf('=')));
		}
		for (String property : ShortLeases.PROPERTIES) {
			// A repeated argument would bind as a list of both values.
			if (!overridden.contains(property.substring(0, property.indexOf('=')))) {
				command.add("--" + property);
			}
		}
		for (String property : properties) {
			command.add("--" + property);
		}
		ChildWorker child = new ChildWorker(name, new ProcessBuilder(command).redirectErrorStream(true).start());
		await().atMost(Duration.ofSeconds(30)).until(() -> child.contains(ready) || !child.process.isAlive());
		assertThat(child.process.isAlive()).as("%s started", name).isTrue();
		return child;
	}

	private void readOutput() {
		try (BufferedReader in = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = in.readLine()) != null) {
				this.lines.add(line);
				System.out.println("[" + this.name + "] " + line);
			}
		}
		catch (IOException ex) {
			// the child is gone
		}
	}

	boolean contains(String line) {
		return this.lines.contains(line);
	}

	/**
	 * The task ids of the lines starting with {@code prefix}, such as
	 * {@code "@@STARTED "}.
	 * @param prefix the line prefix
	 * @return the ids
	 */
	Set<String> ids(String prefix) {
		Set<String> ids = new HashSet<>();
		for (String line : this.lines) {
			if (line.startsWith(prefix)) {
				ids.add(line.substring(prefix.length()).split(" ")[0]);
			}
		}
		return ids;
	}

	/**
	 * The lines starting with {@code prefix}, in the order printed, each split into its
	 * space-separated fields after the prefix (the task id first).
	 * @param prefix the line prefix, such as {@code "@@ALIVE "}
	 * @return the fields of each line
	 */
	List<String[]> events(String prefix) {
		List<String[]> events = new ArrayList<>();
		for (String line : this.lines) {
			if (line.startsWith(prefix)) {
				events.add(line.substring(prefix.length()).split(" "));
			}
		}
		return events;
	}

	/**
	 * Tasks started and not finished (the child's handlers still run them).
	 * @return the ids
	 */
	Set<String> inFlight() {
		Set<String> running = ids("@@STARTED ");
		running.removeAll(ids("@@DONE "));
		return running;
	}

	long pid() {
		return this.process.pid();
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	/**
	 * Wait until the child's process has exited by itself.
	 * @param timeout the longest wait
	 * @return when it exited, epoch milliseconds as seen by this JVM (an upper bound:
	 * noticed by the process reaper just after the exit)
	 */
	long awaitExit(Duration timeout) throws InterruptedException {
		assertThat(this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)).as("%s exited", this.name).isTrue();
		await().atMost(Duration.ofSeconds(5)).until(() -> this.exitedAtMillis != 0);
		return this.exitedAtMillis;
	}

	/** Kill it with SIGKILL and wait until it is gone. */
	void kill() throws InterruptedException {
		this.process.destroyForcibly();
		assertThat(this.process.waitFor(10, TimeUnit.SECONDS)).as("%s killed", this.name).isTrue();
	}

	/**
	 * Send it a signal.
	 * @param signal the signal's name, such as {@code STOP} or {@code CONT}
	 */
	void signal(String signal) throws IOException, InterruptedException {
		Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).inheritIO().start();
		assertThat(kill.waitFor(5, TimeUnit.SECONDS)).isTrue();
		assertThat(kill.exitValue()).as("kill -%s %s", signal, pid()).isZero();
	}

	@Override
	public String toString() {
		return this.name;
	}

	@Override
	public void close() throws InterruptedException {
		if (this.process.isAlive()) {
			// A stopped process cannot die of SIGKILL until the kernel delivers it,
			// which it does; CONT first only makes the exit prompt.
			try {
				signal("CONT");
			}
			catch (IOException | AssertionError ex) {
				// killed below anyway
			}
			kill();
		}
	}

}

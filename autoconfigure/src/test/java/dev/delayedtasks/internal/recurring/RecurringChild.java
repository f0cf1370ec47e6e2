package dev.delayedtasks.internal.recurring;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.test.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A {@link RecurringTestWorker} in a JVM of its own, with the short leases of the fault
 * tests (lease 2 s, grace 500 ms, timer TTL 1 s). Its {@code @@RAN} lines are collected;
 * closing it kills it.
 */
final class RecurringChild implements AutoCloseable {

	private final String name;

	private final Process process;

	private final Queue<String> lines = new ConcurrentLinkedQueue<>();

	private RecurringChild(String name, Process process) {
		this.name = name;
		this.process = process;
		Thread reader = new Thread(this::readOutput, name + "-output");
		reader.setDaemon(true);
		reader.start();
	}

	/**
	 * Start an instance without waiting for it.
	 * @param name a name for its output lines
	 * @param redis where it connects
	 * @param queue the queue its handler runs
	 * @param properties its schedules and other Spring properties, {@code name=value}
	 * @return the starting child
	 */
	static RecurringChild launch(String name, TestRedis redis, String queue, String... properties) throws IOException {
		String java = ProcessHandle.current()
			.info()
			.command()
			.orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp",
				System.getProperty("java.class.path"), RecurringTestWorker.class.getName(),
				"--delayed-tasks.key-prefix=" + redis.keyPrefix(), "--recurring-test.queue=" + queue,
				"--spring.main.banner-mode=off", "--logging.level.root=WARN", "--logging.level.dev.delayedtasks=INFO",
				"--delayed-tasks.worker.lease-duration=2s", "--delayed-tasks.worker.reap-grace=500ms",
				"--delayed-tasks.worker.timer-ttl=1s", "--delayed-tasks.worker.shutdown-timeout=1s"));
		for (String property : redis.connectionProperties()) {
			command.add("--" + property);
		}
		for (String property : properties) {
			command.add("--" + property);
		}
		return new RecurringChild(name, new ProcessBuilder(command).redirectErrorStream(true).start());
	}

	/**
	 * Wait until it is ready: its schedules registered and its handler running.
	 * @return this child
	 */
	RecurringChild awaitReady() {
		await().atMost(Duration.ofSeconds(60)).until(() -> this.lines.contains("@@READY") || !this.process.isAlive());
		assertThat(this.process.isAlive()).as("%s started", this.name).isTrue();
		return this;
	}

	private void readOutput() {
		try (BufferedReader in = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = in.readLine()) != null) {
				this.lines.add(line);
				if (!line.startsWith("@@RAN")) {
					System.out.println("[" + this.name + "] " + line);
				}
			}
		}
		catch (IOException ex) {
			// the child is gone
		}
	}

	/**
	 * The occurrences it ran.
	 * @return one entry per run
	 */
	List<Ran> runs() {
		List<Ran> runs = new ArrayList<>();
		for (String line : this.lines) {
			if (line.startsWith("@@RAN ")) {
				String[] fields = line.substring(6).split(" ");
				String id = fields[0];
				int colon = id.lastIndexOf(':');
				runs.add(new Ran(this.name, id.substring(0, colon), Long.parseLong(id.substring(colon + 1)),
						Integer.parseInt(fields[1]), Long.parseLong(fields[2]), Long.parseLong(fields[3]),
						Long.parseLong(fields[4])));
			}
		}
		return runs;
	}

	/**
	 * The last misfire edge it logged for a schedule: ticks due before it were found
	 * missed (Redis time minus the misfire threshold), unless the policy ran them. An
	 * occurrence created on time that starts later than the threshold is missed too, so
	 * the edge moves on while the instance catches up.
	 * @param schedule the schedule id
	 * @return the edge, epoch ms, or -1
	 */
	long misfireEdge(String schedule) {
		String marker = "Recurring schedule '" + schedule + "' on queue ";
		long edge = -1;
		for (String line : this.lines) {
			int at = line.indexOf(marker);
			int before = line.indexOf(" due before ");
			if (at >= 0 && before > at) {
				String instant = line.substring(before + 12).split("[ ,]")[0];
				edge = Math.max(edge, Instant.parse(instant).toEpochMilli());
			}
		}
		return edge;
	}

	long pid() {
		return this.process.pid();
	}

	/**
	 * The ids of the occurrences whose handler returned.
	 * @return the task ids
	 */
	List<String> done() {
		return this.lines.stream()
			.filter((line) -> line.startsWith("@@DONE "))
			.map((line) -> line.substring(7).trim())
			.toList();
	}

	/** Stop it with SIGTERM, a graceful stop, and wait until it is gone. */
	void terminate() throws InterruptedException {
		this.process.destroy();
		assertThat(this.process.waitFor(30, TimeUnit.SECONDS)).as("%s stopped", this.name).isTrue();
	}

	/** Kill it with SIGKILL and wait until it is gone. */
	void kill() throws InterruptedException {
		this.process.destroyForcibly();
		assertThat(this.process.waitFor(10, TimeUnit.SECONDS)).as("%s killed", this.name).isTrue();
	}

	@Override
	public String toString() {
		return this.name;
	}

	@Override
	public void close() throws InterruptedException {
		if (this.process.isAlive()) {
			kill();
		}
	}

	/**
	 * One run of an occurrence.
	 *
	 * @param instance the child that ran it
	 * @param schedule the schedule id
	 * @param tick the tick, epoch ms
	 * @param delivery the delivery count
	 * @param due the due time
	 * @param claimed when it was claimed (Redis time)
	 * @param started when the handler started (the child's clock, the same host's)
	 */
	record Ran(String instance, String schedule, long tick, int delivery, long due, long claimed, long started) {

		long lateness() {
			return this.started - this.due;
		}

	}

}

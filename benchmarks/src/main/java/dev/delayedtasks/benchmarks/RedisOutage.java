package dev.delayedtasks.benchmarks;

import java.io.IOException;
import java.time.Duration;

import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.RedisServer;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

/**
 * Makes Redis unreachable for a while by stopping its process with {@code SIGSTOP} and
 * continuing it with {@code SIGCONT}: connections stay open and commands hang, as they do
 * when a network partition or a stalled server swallows them. Only a {@code redis-server}
 * this run started can be stopped, never one given by {@code --redis-url}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class RedisOutage {

	private final @Nullable RedisProcess server;

	RedisOutage(ObjectProvider<RedisServer> server) {
		this.server = (server.getIfAvailable() instanceof RedisProcess process) ? process : null;
	}

	/**
	 * Why Redis cannot be stopped here.
	 * @return the reason, or {@code null} when it can
	 */
	@Nullable String unavailableReason() {
		return (this.server != null) ? null : "--redis-url given: only a redis-server this run started is stopped";
	}

	/**
	 * Stop Redis for a while; it continues also when the calling thread is interrupted.
	 * @param length how long
	 * @return when Redis was stopped and continued
	 */
	Stop stopFor(Duration length) {
		RedisProcess process = this.server;
		if (process == null) {
			throw new IllegalStateException(unavailableReason());
		}
		String pid = Long.toString(process.process().pid());
		signal("STOP", pid);
		long stoppedAt = System.currentTimeMillis();
		try {
			Thread.sleep(length.toMillis());
		}
		catch (InterruptedException ex) {
			// Cut short: continue Redis now.
			Thread.currentThread().interrupt();
		}
		long continuedAt = System.currentTimeMillis();
		signal("CONT", pid);
		return new Stop(stoppedAt, continuedAt);
	}

	private static void signal(String signal, String pid) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, pid).inheritIO().start();
			// join, not waitFor: an interrupted thread must still see its SIGCONT
			// through.
			if (kill.onExit().join().exitValue() != 0) {
				throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not run kill -" + signal + " " + pid, ex);
		}
	}

	/**
	 * An outage: Redis on this host, so its clock is this process's clock.
	 *
	 * @param stoppedAtMillis when {@code SIGSTOP} had been delivered, epoch ms
	 * @param continuedAtMillis when {@code SIGCONT} was sent, epoch ms
	 */
	record Stop(long stoppedAtMillis, long continuedAtMillis) {

		Duration length() {
			return Duration.ofMillis(this.continuedAtMillis - this.stoppedAtMillis);
		}

	}

}

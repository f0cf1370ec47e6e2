package dev.delayedtasks.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * The main loop of a soak worker process (profile {@value #PROFILE}, started by
 * {@link SoakWorkers}): its handlers run from startup, and it ends when its standard
 * input closes, which happens when the coordinator stops it or dies. So a worker never
 * outlives its coordinator, even one killed with SIGKILL.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Profile(SoakWorkerRunner.PROFILE)
class SoakWorkerRunner implements ApplicationRunner {

	/** The profile of a worker process. */
	static final String PROFILE = "soak-worker";

	/** Printed once the handlers run. */
	static final String READY = "soak-worker-ready";

	/** How long a graceful shutdown may take before the process halts. */
	private static final Duration SHUTDOWN_LIMIT = Duration.ofSeconds(30);

	@Override
	public void run(ApplicationArguments args) {
		System.out.println(READY + " pid=" + ProcessHandle.current().pid());
		System.out.flush();
		try (InputStream in = System.in) {
			while (in.read() != -1) {
				// The coordinator never writes: end of input means it is done or gone.
			}
		}
		catch (IOException ex) {
			// Gone as well.
		}
		// Returning lets the application close: handlers finish or release their tasks.
		// If that hangs (Redis unreachable), the process must still end.
		Thread halt = new Thread(() -> {
			Pause.millis(SHUTDOWN_LIMIT.toMillis());
			Runtime.getRuntime().halt(3);
		}, "soak-worker-halt");
		halt.setDaemon(true);
		halt.start();
	}

}

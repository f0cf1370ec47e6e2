package dev.delayedtasks.test;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.AbstractRedisClient;

/**
 * Shuts a short-lived Lettuce client down without waiting for ever: its
 * {@code shutdown(quietPeriod, timeout)} waits on a future with no bound, and once a test
 * run left that future uncompleted after every Lettuce thread had ended (the test JVM
 * hung for 20 minutes while starting a server).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class LettuceShutdown {

	private static final long WAIT_SECONDS = 5;

	private LettuceShutdown() {
	}

	/**
	 * Shut the client down, waiting a few seconds at most.
	 * @param client the client
	 */
	static void shutdown(AbstractRedisClient client) {
		try {
			client.shutdownAsync(0, 1, TimeUnit.SECONDS).get(WAIT_SECONDS, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// Its connections are closed already; what is left are threads that end on
			// their own.
		}
	}

}

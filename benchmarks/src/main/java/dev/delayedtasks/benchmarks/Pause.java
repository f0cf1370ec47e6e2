package dev.delayedtasks.benchmarks;

/**
 * Sleeps that end the benchmark when interrupted.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class Pause {

	private Pause() {
	}

	static void millis(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting", ex);
		}
	}

}

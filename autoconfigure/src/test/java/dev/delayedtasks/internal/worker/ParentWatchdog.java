package dev.delayedtasks.internal.worker;

import java.io.IOException;
import java.io.InputStream;

/**
 * Ends a child JVM of the fault tests when its standard input closes, so a test JVM that
 * dies never leaves a child behind.
 */
public final class ParentWatchdog {

	private ParentWatchdog() {
	}

	/**
	 * Start watching standard input on a daemon thread; at end of input, halt.
	 */
	public static void start() {
		Thread watchdog = new Thread(() -> {
			try (InputStream in = System.in) {
				while (in.read() != -1) {
					// the parent never writes; EOF means it is gone
				}
			}
			catch (IOException ex) {
				// exit below
			}
			Runtime.getRuntime().halt(3);
		}, "parent-watchdog");
		watchdog.setDaemon(true);
		watchdog.start();
	}

}

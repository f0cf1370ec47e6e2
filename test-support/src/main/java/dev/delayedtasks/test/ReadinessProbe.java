package dev.delayedtasks.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import javax.net.SocketFactory;

/**
 * Waits for a freshly started {@code redis-server} to answer {@code PING}, through the
 * same kind of socket its clients will use: a TLS server is probed over TLS, so "ready"
 * means its TLS listener works, not merely that some port is open.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class ReadinessProbe {

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(15);

	private final SocketFactory sockets;

	ReadinessProbe(SocketFactory sockets) {
		this.sockets = sockets;
	}

	static ReadinessProbe plain() {
		return new ReadinessProbe(SocketFactory.getDefault());
	}

	/**
	 * Wait until the server answers, or fail with the end of its log.
	 * @param process the server process
	 * @param port its port
	 * @param log its log file
	 * @throws RedisUnavailableException if it exits or stays silent
	 */
	void await(Process process, int port, Path log) {
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			if (!process.isAlive()) {
				throw new RedisUnavailableException(
						"redis-server exited with code " + process.exitValue() + " on port " + port + ": " + tail(log));
			}
			if (ping(port)) {
				return;
			}
			sleep(20);
		}
		throw new RedisUnavailableException("redis-server did not answer PING on port " + port + " within "
				+ STARTUP_TIMEOUT.toSeconds() + " s: " + tail(log));
	}

	boolean ping(int port) {
		try (Socket socket = this.sockets.createSocket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
			socket.setSoTimeout(500);
			OutputStream out = socket.getOutputStream();
			out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			byte[] reply = in.readNBytes(7);
			return new String(reply, StandardCharsets.US_ASCII).startsWith("+PONG");
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static String tail(Path log) {
		try {
			List<String> lines = Files.readAllLines(log);
			return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
		}
		catch (IOException ex) {
			return "(no log)";
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisUnavailableException("Interrupted while waiting for redis-server", ex);
		}
	}

}

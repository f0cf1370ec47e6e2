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

	private static final int LOG_TAIL_LINES = 20;

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
	 * @throws RedisStartFailedException if it exits or stays silent
	 */
	void await(Process process, int port, Path log) {
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			if (!process.isAlive()) {
				throw new RedisStartFailedException("redis-server exited with code " + process.exitValue() + " on port "
						+ port + " during start-up" + logTail(log));
			}
			if (ping(port)) {
				return;
			}
			sleep(20);
		}
		throw new RedisStartFailedException("redis-server did not answer PING on port " + port + " within "
				+ STARTUP_TIMEOUT.toSeconds() + " s" + logTail(log));
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

	/**
	 * The last lines of a server's log, as a suffix for a failure message.
	 * @param log the log file
	 * @return the log's name and its last lines, each on a line of its own
	 */
	static String logTail(Path log) {
		List<String> lines = tail(log);
		if (lines.isEmpty()) {
			return "; " + log + " is empty or missing";
		}
		return "; the end of " + log + ":\n    " + String.join("\n    ", lines);
	}

	static List<String> tail(Path log) {
		try {
			List<String> lines = Files.readAllLines(log);
			return lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size());
		}
		catch (IOException ex) {
			return List.of();
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisStartFailedException("Interrupted while waiting for redis-server", ex);
		}
	}

}

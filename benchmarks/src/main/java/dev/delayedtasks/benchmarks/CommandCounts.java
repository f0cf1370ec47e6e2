package dev.delayedtasks.benchmarks;

import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.protocol.ProtocolKeyword;

/**
 * Counts the commands one application's Lettuce clients complete, by command: what the
 * client sent, unlike {@code INFO commandstats}, which also counts the commands a script
 * called. The dashboard workload gives one to the dashboard's application, so the counts
 * are that application's alone.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class CommandCounts implements CommandLatencyRecorder {

	private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

	private final LongAdder total = new LongAdder();

	@Override
	public void recordCommandLatency(SocketAddress local, SocketAddress remote, ProtocolKeyword commandType,
			long firstResponseLatency, long completionLatency) {
		this.counts
			.computeIfAbsent(new String(commandType.getBytes(), StandardCharsets.US_ASCII).toLowerCase(Locale.ROOT),
					(name) -> new LongAdder())
			.increment();
		this.total.increment();
	}

	/**
	 * The commands completed so far.
	 * @return the count
	 */
	long total() {
		return this.total.sum();
	}

	/**
	 * The commands completed so far, by name.
	 * @return the counts by lower-case command name, as {@code INFO commandstats} names
	 * them
	 */
	Map<String, Long> byCommand() {
		Map<String, Long> copy = new HashMap<>();
		this.counts.forEach((name, count) -> copy.put(name, count.sum()));
		return copy;
	}

}

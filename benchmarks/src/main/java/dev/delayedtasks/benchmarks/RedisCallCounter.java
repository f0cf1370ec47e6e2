package dev.delayedtasks.benchmarks;

import java.net.SocketAddress;
import java.util.concurrent.atomic.LongAdder;

import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.protocol.ProtocolKeyword;

/**
 * Counts every command this JVM's Lettuce clients complete (scripts, blocking reads,
 * pipelined commands alike: one per round trip's command), so a workload can report Redis
 * calls per task. Lettuce hands each completed command to its client resources' latency
 * recorder; this one only counts them.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class RedisCallCounter implements CommandLatencyRecorder {

	private final LongAdder calls = new LongAdder();

	@Override
	public void recordCommandLatency(SocketAddress local, SocketAddress remote, ProtocolKeyword commandType,
			long firstResponseLatency, long completionLatency) {
		this.calls.increment();
	}

	/**
	 * The commands completed so far.
	 * @return the count
	 */
	long calls() {
		return this.calls.sum();
	}

}

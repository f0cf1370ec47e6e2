package dev.delayedtasks.internal.actuate;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.config.MeterFilter;

/**
 * Bounds the {@code queue} tag of the {@code delayed.tasks.*} meters, the timers of the
 * schedule and run observations included: a queue keeps its name when the snapshot
 * reports it ({@link ReportedQueues}) or when fewer than {@code max-queues} other queues
 * have kept theirs on this instance; the rest share {@value #OTHER_QUEUES}, so that queue
 * names made from request data cannot make the registry grow without bound. A
 * {@link MeterFilter} without dependencies, so that a meter registry can apply it before
 * anything that talks to Redis exists; {@code DelayedTaskMetrics} tells it which queues
 * are reported.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class BoundedQueueTags implements MeterFilter {

	/**
	 * The {@code queue} tag of meters of queues beyond the bound: not a valid queue name,
	 * so it cannot be mistaken for one.
	 */
	public static final String OTHER_QUEUES = "(other)";

	private static final String PREFIX = "delayed.tasks.";

	private final int maxOthers;

	private volatile Set<String> reported = Set.of();

	private final Set<String> others = ConcurrentHashMap.newKeySet();

	/**
	 * Create the bound.
	 * @param maxQueues {@code delayed-tasks.monitoring.max-queues}: how many queues that
	 * are not reported keep their own tag
	 */
	public BoundedQueueTags(int maxQueues) {
		this.maxOthers = maxQueues;
	}

	/**
	 * The queues the latest snapshot reports, which keep their own tag.
	 * @param queues the queues
	 */
	public void reported(Set<String> queues) {
		this.reported = Set.copyOf(queues);
	}

	/**
	 * The {@code queue} tag of a queue's meters.
	 * @param queue the queue
	 * @return its name, or {@value #OTHER_QUEUES}
	 */
	public String tag(String queue) {
		if (OTHER_QUEUES.equals(queue) || this.reported.contains(queue) || this.others.contains(queue)) {
			return queue;
		}
		synchronized (this.others) {
			if (this.others.size() < this.maxOthers) {
				this.others.add(queue);
				return queue;
			}
		}
		return OTHER_QUEUES;
	}

	@Override
	public Meter.Id map(Meter.Id id) {
		String queue = id.getTag("queue");
		if (queue == null || !id.getName().startsWith(PREFIX)) {
			return id;
		}
		String tag = tag(queue);
		return tag.equals(queue) ? id : id.withTag(Tag.of("queue", tag));
	}

}

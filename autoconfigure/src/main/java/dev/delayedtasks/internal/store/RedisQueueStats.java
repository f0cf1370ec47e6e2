package dev.delayedtasks.internal.store;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.Names;
import dev.delayedtasks.internal.store.script.Reply;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;

/**
 * Reads {@link QueueStats} with the read-only {@code stats} script: O(1) counts, never a
 * scan.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisQueueStats {

	private static final int HINT_SCAN = 10;

	private final StoreScripts scripts;

	private final StoreSettings settings;

	/**
	 * Create a reader.
	 * @param scripts the scripts
	 * @param settings the settings (for the key prefix)
	 */
	public RedisQueueStats(StoreScripts scripts, StoreSettings settings) {
		this.scripts = scripts;
		this.settings = settings;
	}

	/**
	 * Read a queue's snapshot.
	 * @param queue the queue
	 * @return the snapshot
	 */
	public QueueStats read(String queue) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		Reply reply = new Reply(this.scripts.run(Script.STATS,
				List.of(keys.sched(), keys.ready(), keys.lease(), keys.dead(), keys.stats(), keys.meta(), keys.timer()),
				List.of(keys.base(), Integer.toString(HINT_SCAN)), queue, null));
		Map<String, Long> counters = new LinkedHashMap<>();
		for (int i = 14; i + 1 < reply.size(); i += 2) {
			counters.put(reply.text(i), reply.number(i + 1));
		}
		// Cancelled and rescheduled ready tasks leave hints behind that claims skip; a
		// counter of their own counts them.
		long ready = Math.max(0, reply.number(2) - counters.getOrDefault(QueueCounter.STALE_READY_ENTRIES.field(), 0L));
		String owner = reply.text(8);
		String layout = reply.text(10);
		return new QueueStats(queue, reply.number(0), reply.number(1), ready, reply.number(3), reply.number(4),
				reply.number(5), reply.number(6), owner.isEmpty() ? null : owner, reply.number(7), reply.number(9) == 1,
				layout.isEmpty() ? null : layout, FlowLimits.decode(reply.text(11)), reply.number(12), reply.number(13),
				Map.copyOf(counters));
	}

}

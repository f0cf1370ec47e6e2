package dev.delayedtasks.internal.actuate;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.internal.store.QueueCounter;
import dev.delayedtasks.internal.store.QueueStats;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Logs one warning per queue and snapshot when the scripts have dead-lettered tasks whose
 * data in Redis they could not read (a hash missing a field, a key of the wrong type, a
 * missing payload). The scripts cannot log, so the {@code corrupt} counter they keep is
 * the signal; the dead letters say what was wrong with each task.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class CorruptDataReporter implements Consumer<Map<String, QueueStats>> {

	private static final Log logger = LogFactory.getLog(CorruptDataReporter.class);

	private final Map<String, Long> seen = new HashMap<>();

	@Override
	public synchronized void accept(Map<String, QueueStats> snapshot) {
		for (QueueStats stats : snapshot.values()) {
			long corrupt = stats.counter(QueueCounter.CORRUPT);
			Long before = this.seen.put(stats.queue(), corrupt);
			// The first snapshot only learns the count: it may be old news.
			if (before != null && corrupt > before) {
				logger.warn((corrupt - before) + " task(s) of queue '" + stats.queue()
						+ "' had unreadable data in Redis and were dead-lettered with reason '"
						+ FailureReason.CORRUPT.value() + "'; " + "their dead letters say what was wrong");
			}
		}
	}

}

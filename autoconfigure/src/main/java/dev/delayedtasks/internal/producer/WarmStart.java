package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.EnqueueCall;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.PreparedTask;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.AclDenial;
import dev.delayedtasks.internal.store.script.ReactiveStoreScripts;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * Does at startup what the first {@code schedule} would otherwise do on its way: with
 * {@code EVALSHA}, loads every script into Redis ({@code SCRIPT LOAD}, so no first call
 * meets {@code NOSCRIPT}; in Functions mode the startup check has already found or loaded
 * the library, and nothing is loaded here), opens the blocking and the reactive
 * connections with one read-only script call each ({@code stats} of a queue that does not
 * exist), and runs the producer's own path once without sending anything (validation,
 * JSON, the encoded call), so its classes are loaded. Handlers prepare the reading of
 * their payload type when their worker is made ({@link PayloadCodec#prepare}). A failure
 * here is logged, not thrown: the startup checks already stop an application whose Redis
 * is wrong, and the calls themselves still load what they need.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class WarmStart {

	private static final Log logger = LogFactory.getLog(WarmStart.class);

	private static final String QUEUE = "warm-start";

	private final StoreScripts scripts;

	private final @Nullable ReactiveStoreScripts reactiveScripts;

	private final PayloadCodec codec;

	private final StoreSettings settings;

	/**
	 * Create the warm start.
	 * @param scripts the scripts on the blocking connection
	 * @param reactiveScripts the scripts on the reactive connection, or {@code null}
	 * @param codec the payload codec
	 * @param settings the store settings
	 */
	public WarmStart(StoreScripts scripts, @Nullable ReactiveStoreScripts reactiveScripts, PayloadCodec codec,
			StoreSettings settings) {
		this.scripts = scripts;
		this.reactiveScripts = reactiveScripts;
		this.codec = codec;
		this.settings = settings;
	}

	/**
	 * Warm up; never throws.
	 */
	public void run() {
		long start = System.nanoTime();
		try {
			PreparedTask task = PreparedTask.of(TaskRequest.of(QUEUE, Map.of("warm", 1)).delay(Duration.ofSeconds(1)),
					this.codec, (queue) -> 1);
			new EnqueueCall(this.settings, this.codec).encode(QUEUE, List.of(task));
			loadScripts();
			// One read-only script call on each connection, through the same path as
			// every call: its first run loads and links what every later one uses.
			PartitionKeys keys = this.settings.keys(QUEUE);
			List<String> statsKeys = List.of(keys.sched(), keys.ready(), keys.lease(), keys.dead(), keys.stats(),
					keys.meta(), keys.timer());
			List<String> statsArgs = List.of(keys.base(), "0");
			this.scripts.run(Script.STATS, statsKeys, statsArgs, QUEUE, null);
			if (this.reactiveScripts != null) {
				this.reactiveScripts.run(Script.STATS, statsKeys, statsArgs, QUEUE, null).block(Duration.ofSeconds(10));
			}
			if (logger.isDebugEnabled()) {
				logger.debug("Warm start took " + (System.nanoTime() - start) / 1_000_000 + " ms");
			}
		}
		catch (DataAccessException | IllegalStateException | DelayedTaskException ex) {
			logger.warn("Warm start did not complete (the first calls will load what they need): " + ex.getMessage());
		}
	}

	private void loadScripts() {
		try {
			this.scripts.loadAll();
		}
		catch (DataAccessException ex) {
			if (!AclDenial.isDenial(ex)) {
				throw ex;
			}
			// A user without +script|load: the first call of each script sends it with
			// EVAL instead.
			logger.info("Warm start: the Redis user may not run SCRIPT LOAD, so each script is sent with EVAL on its"
					+ " first call (grant +script|load to load them at startup)");
		}
	}

}

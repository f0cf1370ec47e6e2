package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.MisfirePolicy;
import dev.delayedtasks.OverlapPolicy;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.LayoutVersion;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One schedule's hash and scripts in its queue's partition: reading it, advancing it with
 * {@code recur_advance} until nothing more is needed, pausing, resuming, removing it and
 * recording an outcome with {@code recur_control}. Used by {@link RedisRecurringTasks}.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
final class ScheduleScripts {

	private static final Log logger = LogFactory.getLog(ScheduleScripts.class);

	/**
	 * Calls of {@code recur_advance} before giving way to an instance that keeps
	 * advancing it.
	 */
	private static final int ATTEMPTS = 8;

	private final StoreScripts scripts;

	private final StoreSettings settings;

	private final StringRedisTemplate redis;

	private final RecurringEvents events;

	private final RedisTime time;

	/**
	 * Run a script of this package.
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments
	 * @param queue the queue, for errors
	 * @return the reply
	 */
	List<Object> run(Script script, List<String> keys, List<String> args, String queue) {
		return this.scripts.run(script, keys, args, queue, null);
	}

	ScheduleScripts(StoreScripts scripts, StoreSettings settings, StringRedisTemplate redis, RecurringEvents events,
			RedisTime time) {
		this.scripts = scripts;
		this.settings = settings;
		this.redis = redis;
		this.events = events;
		this.time = time;
	}

	/**
	 * Run {@code recur_advance} until it needs nothing more: create the schedule's next
	 * occurrences and, for an occurrence about to run, get the verdict.
	 * @param queue the queue
	 * @param id the schedule id
	 * @param startTick the tick of the occurrence about to run, or {@code null}
	 * @return the verdict: {@code R} run, {@code O} overlap, {@code X} missed or
	 * superseded, {@code P} paused, or {@code ""} without a start tick
	 */
	String advance(String queue, String id, @Nullable Long startTick) {
		PartitionKeys keys = this.settings.keys(queue);
		List<String> scriptKeys = List.of(keys.sched(), keys.ready(), keys.wake(), keys.tick(), keys.stats(),
				keys.meta(), keys.schedule(id));
		Long pending = startTick;
		String verdict = "";
		for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
			Map<String, String> stored = read(() -> this.redis.<String, String>opsForHash().entries(keys.schedule(id)),
					queue, id);
			if (stored.isEmpty() || stored.get("g") == null) {
				return (pending != null) ? "X" : verdict;
			}
			Ticks ticks;
			try {
				ticks = Ticks.stored(stored.get("k"), stored.get("x"), stored.get("z"));
			}
			catch (RuntimeException ex) {
				throw new DelayedTaskException("Recurring schedule '" + id + "' on queue '" + queue
						+ "' has an unreadable definition in Redis (" + ex.getMessage() + "): upsert it again");
			}
			String n = stored.getOrDefault("n", "R");
			if ("-1".equals(n) && pending == null) {
				return verdict;
			}
			// n = -1: the expression has no further tick; only a start is left to decide.
			Instant plannedAt = this.time.now(queue);
			TickPlan plan = "-1".equals(n) ? new TickPlan(0, List.of(), -1)
					: TickPlan.plan(ticks, "R".equals(n) ? null : Long.valueOf(n), plannedAt,
							Duration.ofMillis(parseLong(stored.get("mt"), 60_000)), keepLate(stored),
							RedisRecurringTasks.LOOKAHEAD);
			List<String> args = new ArrayList<>(List.of(keys.base(), id, LayoutVersion.CURRENT,
					Integer.toString(this.settings.fanoutBatch()), stored.get("g"), n,
					(pending != null) ? pending.toString() : "", Integer.toString(RedisRecurringTasks.LOOKAHEAD),
					Long.toString(plan.dropped()), Long.toString(plan.nextAfter()),
					Long.toString(plannedAt.toEpochMilli()), Long.toString(TickPlan.CLOCK_MARGIN.toMillis())));
			plan.ticks().forEach((tick) -> args.add(tick.toString()));
			List<Object> reply = this.scripts.run(Script.RECUR_ADVANCE, scriptKeys, args, queue, null);
			this.time.observe(queue, (Long) reply.get(0));
			checkLayout(reply, queue);
			String code = (String) reply.get(1);
			long created = (Long) reply.get(2);
			long missed = (Long) reply.get(3);
			if (created > 0) {
				this.events.created(queue, id, created);
			}
			if (missed > 0) {
				this.events.missed(queue, id, missed);
				Instant edge = Instant.ofEpochMilli((Long) reply.get(0) - parseLong(stored.get("mt"), 60_000));
				logger.info("Recurring schedule '" + id + "' on queue '" + queue + "': " + missed
						+ " missed tick(s) due before " + edge + ", misfire policy " + misfire(stored.get("mp"))
						+ ((misfire(stored.get("mp")) == MisfirePolicy.RUN_ALL) ? " (bound " + stored.get("mb") + ")"
								: ""));
			}
			if (!((String) reply.get(4)).isEmpty()) {
				verdict = (String) reply.get(4);
				pending = null;
			}
			switch (code) {
				case "O", "P", "G" -> {
					return (pending != null) ? "X" : verdict;
				}
				default -> {
					// T: more ticks needed; M or C: another instance advanced or
					// redefined it; K: planned from a time too far from Redis's, planned
					// again from the time in the reply
				}
			}
		}
		// Another instance keeps advancing it: that instance creates the occurrences.
		return (pending != null) ? "R" : verdict;
	}

	Optional<RecurringScheduleInfo> find(String queue, String id) {
		PartitionKeys keys = this.settings.keys(queue);
		Map<String, String> stored = read(() -> this.redis.<String, String>opsForHash().entries(keys.schedule(id)),
				queue, id);
		if (stored.isEmpty() || stored.get("g") == null) {
			return Optional.empty();
		}
		Ticks ticks = Ticks.stored(stored.get("k"), stored.get("x"), stored.get("z"));
		Long next = null;
		for (String tick : stored.getOrDefault("w", "").split(",")) {
			if (!tick.isEmpty()) {
				long value = Long.parseLong(tick);
				// A triggered occurrence waits in the window too, but it is not a tick.
				Instant instant = Instant.ofEpochMilli(value);
				if (instant.equals(ticks.next(instant.minusMillis(1)))) {
					next = (next == null || value < next) ? value : next;
				}
			}
		}
		String n = stored.getOrDefault("n", "R");
		if (next == null && !"-1".equals(n)) {
			next = "R".equals(n) ? instantMillis(ticks.next(this.time.now(queue))) : Long.valueOf(n);
		}
		return Optional.of(new RecurringScheduleInfo(id, queue, ticks.describe(), ticks.zone(),
				misfire(stored.get("mp")), "S".equals(stored.get("op")) ? OverlapPolicy.SKIP : OverlapPolicy.ALLOW,
				stored.getOrDefault("o", RedisRecurringTasks.ORIGIN_API), "1".equals(stored.get("ps")), instant(next),
				instant(stored.get("lr")), stored.get("lo"), parseLong(stored.get("cc"), 0),
				parseLong(stored.get("cm"), 0), instant(stored.get("lm"))));
	}

	boolean control(String queue, String id, String op, String tick, String outcome) {
		PartitionKeys keys = this.settings.keys(queue);
		List<Object> reply = this.scripts.run(Script.RECUR_CONTROL, List.of(keys.schedule(id), keys.recurring()),
				List.of(id, op, tick, outcome), queue, null);
		return !"N".equals(reply.get(1));
	}

	/**
	 * Create one occurrence of a schedule now, outside its ticks.
	 * @param queue the schedule's queue
	 * @param id the schedule id
	 * @return the occurrence's task id; {@code null} when the schedule is unknown
	 * @throws IllegalStateException when the schedule is paused
	 */
	@Nullable String trigger(String queue, String id) {
		PartitionKeys keys = this.settings.keys(queue);
		List<Object> reply = this.scripts.run(Script.RECUR_TRIGGER,
				List.of(keys.ready(), keys.wake(), keys.stats(), keys.meta(), keys.schedule(id)),
				List.of(keys.base(), id, LayoutVersion.CURRENT, Integer.toString(this.settings.fanoutBatch())), queue,
				null);
		checkLayout(reply, queue);
		return switch ((String) reply.get(1)) {
			case "N" -> null;
			case "P" -> throw new IllegalStateException(
					"Recurring schedule '" + id + "' of queue '" + queue + "' is paused: resume it to trigger it");
			default -> (String) reply.get(2);
		};
	}

	static void checkLayout(List<Object> reply, String queue) {
		if ("LAYOUT".equals(reply.get(1))) {
			throw new DelayedTaskException("Queue '" + queue + "' in Redis has data layout version " + reply.get(2)
					+ ", but this version of delayed-tasks reads and writes layout " + LayoutVersion.CURRENT
					+ ": run the delayed-tasks version that wrote it, or use a new delayed-tasks.key-prefix");
		}
	}

	private static int keepLate(Map<String, String> stored) {
		return switch (misfire(stored.get("mp"))) {
			case SKIP -> 0;
			case RUN_ONCE -> 1;
			case RUN_ALL -> (int) parseLong(stored.get("mb"), 1);
		};
	}

	private static MisfirePolicy misfire(@Nullable String code) {
		return switch ((code != null) ? code : "S") {
			case "O" -> MisfirePolicy.RUN_ONCE;
			case "A" -> MisfirePolicy.RUN_ALL;
			default -> MisfirePolicy.SKIP;
		};
	}

	private static long parseLong(@Nullable String value, long fallback) {
		try {
			return (value != null) ? Long.parseLong(value) : fallback;
		}
		catch (NumberFormatException ex) {
			return fallback;
		}
	}

	private static @Nullable Long instantMillis(@Nullable Instant instant) {
		return (instant != null) ? instant.toEpochMilli() : null;
	}

	private static @Nullable Instant instant(@Nullable Long millis) {
		return (millis != null) ? Instant.ofEpochMilli(millis) : null;
	}

	private static @Nullable Instant instant(@Nullable String millis) {
		long value = parseLong(millis, -1);
		return (value >= 0) ? Instant.ofEpochMilli(value) : null;
	}

	<T> T read(RedisRead<T> read, String queue, @Nullable String id) {
		try {
			return read.run();
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException(
					"Redis failed to read or write recurring schedule" + ((id != null) ? " '" + id + "'" : "s")
							+ " of queue '" + queue + "': " + ex.getMostSpecificCause().getMessage(),
					null, ex);
		}
	}

	@FunctionalInterface
	interface RedisRead<T> {

		T run();

	}

}

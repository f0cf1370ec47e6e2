package dev.delayedtasks.internal.recurring;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.ToIntFunction;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.MisfirePolicy;
import dev.delayedtasks.OverlapPolicy;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.RecurringSchedulePage;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.store.LayoutVersion;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.internal.worker.OccurrenceGate;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * {@link RecurringTasks} on Redis, and the {@link OccurrenceGate} that applies a
 * schedule's policies when one of its occurrences is about to run.
 * <p>
 * A schedule lives in its queue's partition ({@link PartitionKeys#schedule(String)}), so
 * the script that creates an occurrence and advances the schedule touches one Cluster
 * slot. It always keeps {@value #LOOKAHEAD} future occurrences created: the queue's timer
 * fires each at its due instant, with the lateness of any delayed task, and no poll
 * decides when an occurrence runs. Whenever an occurrence is about to run (and at
 * startup, and on a slow repair pass) an instance tops the schedule up; a crash between
 * two top-ups leaves the next occurrence in place. Instances that race pass the same
 * expected next tick, and the script's compare-and-set lets one of them create it. A
 * global hash {@code <prefix>:recurring} maps schedule ids to queues for lookups by id.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public final class RedisRecurringTasks implements RecurringTasks, OccurrenceGate {

	private static final Log logger = LogFactory.getLog(RedisRecurringTasks.class);

	/** Future occurrences kept created ahead of time. */
	static final int LOOKAHEAD = 2;

	/** Where schedules declared with {@code @Recurring} come from. */
	public static final String ORIGIN_ANNOTATION = "annotation";

	/** Where schedules declared in {@code delayed-tasks.recurring.*} come from. */
	public static final String ORIGIN_PROPERTIES = "properties";

	/** Where schedules created with {@link RecurringTasks#upsert} come from. */
	public static final String ORIGIN_API = "api";

	private final ScheduleScripts schedules;

	private final StoreSettings settings;

	private final PayloadCodec codec;

	private final QueueIndex queues;

	private final StringRedisTemplate redis;

	private final ToIntFunction<String> maxAttempts;

	private final RecurringEvents events;

	private final String indexKey;

	private final RedisTime time;

	/**
	 * Create the schedules' store.
	 * @param scripts the scripts
	 * @param settings the store settings
	 * @param codec writes the occurrences' payload envelope
	 * @param queues the index of known queues
	 * @param redis a string template on the same connection factory
	 * @param maxAttempts the max attempts of a queue's tasks
	 * @param events what this instance reports
	 * @param clock this instance's clock: only a first estimate of Redis's time, which
	 * decides every tick
	 */
	public RedisRecurringTasks(StoreScripts scripts, StoreSettings settings, PayloadCodec codec, QueueIndex queues,
			StringRedisTemplate redis, ToIntFunction<String> maxAttempts, RecurringEvents events, Clock clock) {
		this.time = new RedisTime(clock);
		this.schedules = new ScheduleScripts(scripts, settings, redis, events, this.time);
		this.settings = settings;
		this.codec = codec;
		this.queues = queues;
		this.redis = redis;
		this.maxAttempts = maxAttempts;
		this.events = events;
		this.indexKey = settings.keyPrefix() + ":recurring";
	}

	@Override
	public RecurringScheduleInfo upsert(RecurringSchedule schedule) {
		return upsert(schedule, ORIGIN_API);
	}

	/**
	 * Create or update a schedule, saying where it was declared.
	 * @param schedule the schedule
	 * @param origin {@link #ORIGIN_ANNOTATION}, {@link #ORIGIN_PROPERTIES} or
	 * {@link #ORIGIN_API}
	 * @return the schedule as stored
	 */
	public RecurringScheduleInfo upsert(RecurringSchedule schedule, String origin) {
		String id = schedule.id();
		String queue = schedule.queue();
		String owner = this.schedules
			.read(() -> (String) this.redis.<String, String>opsForHash().get(this.indexKey, id), queue, id);
		if (owner != null && !owner.equals(queue)) {
			throw new InvalidTaskRequestException("Recurring schedule '" + id + "' already exists on queue '" + owner
					+ "', not '" + queue + "': remove it first, or choose another id");
		}
		Ticks ticks = Ticks.of(schedule);
		String envelope = this.codec.envelope(queue, schedule.payload(), Map.of(HEADER, id));
		List<String> definition = List.of(ticks.kind(), ticks.expression(), ticks.zone().getId(), envelope,
				misfireCode(schedule.misfire()), Integer.toString(schedule.misfireBound()),
				Long.toString(schedule.misfireThreshold().toMillis()),
				(schedule.overlap() == OverlapPolicy.SKIP) ? "S" : "A",
				Integer.toString(this.maxAttempts.applyAsInt(queue)));
		this.queues.register(queue);
		this.schedules.read(() -> {
			this.redis.opsForHash().put(this.indexKey, id, queue);
			return null;
		}, queue, id);
		PartitionKeys keys = this.settings.keys(queue);
		List<String> args = new ArrayList<>(List.of(id, LayoutVersion.CURRENT, digest(definition)));
		args.addAll(definition);
		args.add(origin);
		List<Object> reply = this.schedules.run(Script.RECUR_UPSERT,
				List.of(keys.schedule(id), keys.recurring(), keys.meta()), args, queue);
		ScheduleScripts.checkLayout(reply, queue);
		this.schedules.advance(queue, id, null);
		return this.schedules.find(queue, id)
			.orElseThrow(() -> new DelayedTaskException(
					"Recurring schedule '" + id + "' on queue '" + queue + "' was removed while it was created"));
	}

	@Override
	public boolean remove(String id) {
		String queue = queueOf(id);
		if (queue == null) {
			return false;
		}
		boolean existed = this.schedules.control(queue, id, "D", "", "");
		this.schedules.read(() -> this.redis.opsForHash().delete(this.indexKey, id), queue, id);
		return existed;
	}

	@Override
	public boolean pause(String id) {
		String queue = queueOf(id);
		return queue != null && this.schedules.control(queue, id, "P", "", "");
	}

	@Override
	public boolean resume(String id) {
		String queue = queueOf(id);
		if (queue == null || !this.schedules.control(queue, id, "U", "", "")) {
			return false;
		}
		this.schedules.advance(queue, id, null);
		return true;
	}

	@Override
	public Optional<TaskId> trigger(String id) {
		String queue = queueOf(id);
		String occurrence = (queue != null) ? this.schedules.trigger(queue, id) : null;
		return (occurrence != null) ? Optional.of(TaskId.of(occurrence)) : Optional.empty();
	}

	@Override
	public List<RecurringScheduleInfo> list() {
		return read(new TreeMap<>(ids()));
	}

	@Override
	public RecurringSchedulePage list(@Nullable String after, int limit) {
		if (limit < 1) {
			throw new InvalidTaskRequestException(
					"A page of recurring schedules holds at least 1 schedule, not " + limit);
		}
		NavigableMap<String, String> index = new TreeMap<>(ids());
		NavigableMap<String, String> rest = (after != null) ? index.tailMap(RecurringSchedule.checkId(after), false)
				: index;
		Map<String, String> page = new LinkedHashMap<>();
		for (Map.Entry<String, String> schedule : rest.entrySet()) {
			if (page.size() == limit) {
				break;
			}
			page.put(schedule.getKey(), schedule.getValue());
		}
		String next = (rest.size() > page.size()) ? List.copyOf(page.keySet()).get(page.size() - 1) : null;
		return new RecurringSchedulePage(read(page), next, index.size());
	}

	/**
	 * Read schedules, each with a call of its own. One that cannot be read (corrupt data
	 * under its key) is left out and logged, not the others with it: the endpoint and
	 * health go on showing them.
	 * @param schedules schedule id to queue, in the order to return them
	 * @return the schedules read
	 */
	List<RecurringScheduleInfo> read(Map<String, String> schedules) {
		List<RecurringScheduleInfo> read = new ArrayList<>();
		schedules.forEach((id, queue) -> {
			try {
				this.schedules.find(queue, id).ifPresent(read::add);
			}
			catch (RuntimeException ex) {
				logger.warn("Could not read recurring schedule '" + id + "' of queue '" + queue + "'; it is left out of"
						+ " the list: " + ex.getMessage());
			}
		});
		return read;
	}

	/**
	 * This instance's estimate of the scripts' time for a queue.
	 * @param queue the queue
	 * @return the estimate
	 */
	Instant redisTime(String queue) {
		return this.time.now(queue);
	}

	@Override
	public Optional<RecurringScheduleInfo> find(String id) {
		String queue = queueOf(id);
		return (queue != null) ? this.schedules.find(queue, id) : Optional.empty();
	}

	/**
	 * Create what a schedule is missing: its next occurrences, or the occurrences its
	 * misfire policy runs for ticks found missed.
	 * @param id the schedule id
	 */
	public void ensure(String id) {
		String queue = queueOf(id);
		if (queue != null) {
			this.schedules.advance(queue, id, null);
		}
	}

	/**
	 * The ids of every schedule, with their queues.
	 * @return schedule id to queue
	 */
	public Map<String, String> ids() {
		return this.schedules.read(() -> this.redis.<String, String>opsForHash().entries(this.indexKey), "*", null);
	}

	@Override
	public boolean admit(TaskContext context) {
		String id = context.header(HEADER);
		String taskId = context.id().value();
		String prefix = id + ":";
		if (id == null || !taskId.startsWith(prefix)) {
			return true;
		}
		long tick;
		try {
			tick = Long.parseLong(taskId.substring(prefix.length()));
		}
		catch (NumberFormatException ex) {
			return true;
		}
		String verdict = this.schedules.advance(context.queue(), id, tick);
		String reason = switch (verdict) {
			case "R" -> null;
			case "O" -> "overlap";
			case "P" -> "paused";
			default -> "missed";
		};
		if (reason == null) {
			return true;
		}
		this.events.skipped(context.queue(), id, reason);
		return false;
	}

	@Override
	public void finished(TaskContext context, @Nullable Throwable failure) {
		String id = context.header(HEADER);
		String taskId = context.id().value();
		if (id != null && taskId.startsWith(id + ":")) {
			this.schedules.control(context.queue(), id, "O", taskId.substring(id.length() + 1),
					(failure != null) ? "failed: " + failure.getClass().getSimpleName() : "succeeded");
		}
	}

	private @Nullable String queueOf(String id) {
		RecurringSchedule.checkId(id);
		return this.schedules.read(() -> (String) this.redis.<String, String>opsForHash().get(this.indexKey, id), "*",
				id);
	}

	static String misfireCode(MisfirePolicy policy) {
		return switch (policy) {
			case SKIP -> "S";
			case RUN_ONCE -> "O";
			case RUN_ALL -> "A";
		};
	}

	private static String digest(List<String> definition) {
		try {
			MessageDigest sha = MessageDigest.getInstance("SHA-256");
			for (String part : definition) {
				sha.update(part.getBytes(StandardCharsets.UTF_8));
				sha.update((byte) 0);
			}
			return HexFormat.of().formatHex(sha.digest(), 0, 12);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}

package dev.delayedtasks.internal.recurring;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.RecurringScheduleInfo;
import dev.delayedtasks.internal.recurring.RecurringDeclarations.Declared;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * Brings the recurring schedules in Redis in line with this application at startup,
 * before its handlers start: upserts every schedule declared with {@code @Recurring} or
 * in {@code delayed-tasks.recurring.*} (properties override the fields they set of an
 * annotation with the same id, and {@code enabled: false} removes the schedule), reports
 * schedules that were declared once but no longer are, and creates whatever every
 * schedule is missing (the misfire policy applies to ticks missed while no instance ran).
 * Then, as a repair pass only, it does the last step again at a slow interval:
 * occurrences are created ahead of their ticks whenever an occurrence runs, so this pass
 * never decides when one runs; it recreates occurrences lost with Redis data and notices
 * ticks missed while a queue has no running handler.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public final class RecurringScheduleRegistrar implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RecurringScheduleRegistrar.class);

	/** The repair pass's interval. */
	public static final Duration REPAIR_INTERVAL = Duration.ofMinutes(1);

	private final RedisRecurringTasks recurring;

	private final RecurringDeclarations annotated;

	private final List<ScheduleDeclaration> configured;

	private final Set<String> disabled;

	private final int phase;

	private final RecurringSnapshot snapshot;

	private final Duration snapshotInterval;

	private final int maxSchedules;

	private final Duration repairInterval;

	private volatile Map<String, Declared> declared = Map.of();

	private @Nullable ScheduledExecutorService repairs;

	/**
	 * Create the registrar.
	 * @param recurring the schedules' store
	 * @param annotated the schedules declared with {@code @Recurring}
	 * @param configured the schedules declared in properties, whole or overriding fields
	 * of an annotated one with the same id
	 * @param disabled the ids whose properties say {@code enabled: false}
	 * @param phase the lifecycle phase: before the handlers'
	 * @param snapshot the snapshot to keep up to date for health
	 * @param snapshotInterval how often to refresh it
	 * @param maxSchedules the most schedules the snapshot reads: those this application
	 * declares always, then the others by id
	 */
	public RecurringScheduleRegistrar(RedisRecurringTasks recurring, RecurringDeclarations annotated,
			List<ScheduleDeclaration> configured, Set<String> disabled, int phase, RecurringSnapshot snapshot,
			Duration snapshotInterval, int maxSchedules) {
		this(recurring, annotated, configured, disabled, phase, snapshot, snapshotInterval, maxSchedules,
				REPAIR_INTERVAL);
	}

	RecurringScheduleRegistrar(RedisRecurringTasks recurring, RecurringDeclarations annotated,
			List<ScheduleDeclaration> configured, Set<String> disabled, int phase, RecurringSnapshot snapshot,
			Duration snapshotInterval, int maxSchedules, Duration repairInterval) {
		this.repairInterval = repairInterval;
		this.recurring = recurring;
		this.annotated = annotated;
		this.configured = configured;
		this.disabled = disabled;
		this.phase = phase;
		this.snapshot = snapshot;
		this.snapshotInterval = snapshotInterval;
		this.maxSchedules = maxSchedules;
	}

	@Override
	public synchronized void start() {
		if (this.repairs != null) {
			return;
		}
		// Configuration wins over an annotation, field by field; enabled=false switches
		// an annotated schedule off too. A schedule that is invalid once merged fails
		// startup.
		Map<String, Declared> declared = this.annotated.resolve(this.configured, this.disabled);
		this.declared = Collections.unmodifiableMap(new LinkedHashMap<>(declared));
		Map<String, Declared> unregistered = new LinkedHashMap<>(declared);
		try {
			removeDisabled();
			upsert(unregistered);
			reportUndeclared(declared.keySet());
			ensureAll();
		}
		catch (RuntimeException ex) {
			// Redis may come back: the repair pass registers them once it does.
			logger.warn("Could not register the recurring schedules at startup: " + ex.getMessage()
					+ "; retrying every " + this.repairInterval.toSeconds() + " s");
		}
		this.repairs = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "delayed-tasks-recurring");
			thread.setDaemon(true);
			return thread;
		});
		this.repairs.scheduleWithFixedDelay(() -> repair(unregistered), this.repairInterval.toMillis(),
				this.repairInterval.toMillis(), TimeUnit.MILLISECONDS);
		this.repairs.scheduleWithFixedDelay(this::refreshSnapshot, 0, this.snapshotInterval.toMillis(),
				TimeUnit.MILLISECONDS);
	}

	private void refreshSnapshot() {
		try {
			Map<String, String> index = this.recurring.ids();
			this.snapshot.update(this.recurring.read(reported(index)), index.size(), this.recurring::redisTime);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not read the recurring schedules: " + ex.getMessage());
		}
	}

	/**
	 * The schedules the snapshot reads, the same on every refresh and every instance of
	 * this application: those it declares (always: its own configuration fixes their
	 * number), then the others by id up to the limit.
	 * @param index every schedule id, with its queue
	 * @return the schedules to read, id to queue
	 */
	private Map<String, String> reported(Map<String, String> index) {
		Map<String, String> reported = new LinkedHashMap<>();
		new TreeMap<>(index).forEach((id, queue) -> {
			if (this.declared.containsKey(id)) {
				reported.put(id, queue);
			}
		});
		for (Map.Entry<String, String> schedule : new TreeMap<>(index).entrySet()) {
			if (reported.size() >= this.maxSchedules) {
				break;
			}
			reported.putIfAbsent(schedule.getKey(), schedule.getValue());
		}
		return reported;
	}

	private void removeDisabled() {
		for (String id : this.disabled) {
			if (this.recurring.find(id).isPresent()) {
				this.recurring.remove(id);
				logger.info(
						"Removed recurring schedule '" + id + "': delayed-tasks.recurring." + id + ".enabled is false");
			}
		}
	}

	/**
	 * Register the schedules, each on its own: one that cannot be registered (moved to
	 * another queue, corrupt data under its key) is logged and left for the repair pass,
	 * and the others are registered.
	 * @param unregistered the schedules not registered yet; each registered one leaves
	 */
	private void upsert(Map<String, Declared> unregistered) {
		for (Declared schedule : List.copyOf(unregistered.values())) {
			String origin = schedule.where().startsWith("delayed-tasks.") ? RedisRecurringTasks.ORIGIN_PROPERTIES
					: RedisRecurringTasks.ORIGIN_ANNOTATION;
			RecurringScheduleInfo info;
			try {
				info = this.recurring.upsert(schedule.schedule(), origin);
			}
			catch (RuntimeException ex) {
				logger.warn("Could not register recurring schedule '" + schedule.schedule().id() + "' declared by "
						+ schedule.where() + ": " + ex.getMessage() + "; the other schedules are registered, and this"
						+ " one is tried again every " + this.repairInterval.toSeconds() + " s");
				continue;
			}
			unregistered.remove(schedule.schedule().id());
			logger.info("Recurring schedule '" + info.id() + "' on queue '" + info.queue() + "' (" + info.expression()
					+ ", " + info.zone() + "): next tick " + info.nextTick());
		}
	}

	/**
	 * Schedules declared by an annotation or properties that this application no longer
	 * declares keep running: another application, or an older version still rolling out,
	 * may declare them. Say so, with how to remove one.
	 * @param declared the ids this application declares
	 */
	private void reportUndeclared(Set<String> declared) {
		for (RecurringScheduleInfo info : this.recurring.list()) {
			if (!declared.contains(info.id()) && !RedisRecurringTasks.ORIGIN_API.equals(info.origin())) {
				logger.warn("Recurring schedule '" + info.id() + "' on queue '" + info.queue() + "' was declared by "
						+ info.origin() + " but this application no longer declares it; it keeps running until "
						+ "removed (RecurringTasks.remove(\"" + info.id() + "\") or the delayedtasks endpoint)");
			}
		}
	}

	private void ensureAll() {
		Set<String> ids;
		try {
			ids = this.recurring.ids().keySet();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not read the recurring schedules: " + ex.getMessage());
			return;
		}
		for (String id : ids) {
			try {
				this.recurring.ensure(id);
			}
			catch (RuntimeException ex) {
				logger.warn(
						"Could not create the next occurrences of recurring schedule '" + id + "': " + ex.getMessage());
			}
		}
	}

	private void repair(Map<String, Declared> unregistered) {
		try {
			removeDisabled();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not remove the recurring schedules switched off by configuration: " + ex.getMessage());
		}
		upsert(unregistered);
		restoreDeclared();
		// Each schedule on its own: one that fails never keeps the others from their
		// missed ticks and lost occurrences.
		ensureAll();
	}

	/**
	 * Register again the declared schedules Redis no longer has: its data was lost (a
	 * restart without persistence, a failover to an empty replica), a test cleared it, or
	 * someone removed one (a declared schedule comes back, as it would at the next
	 * startup: pause it, or switch it off with {@code enabled: false}). Each repair pass
	 * does it; delayed-tasks-test calls it after clearing the keys.
	 */
	public void restoreDeclared() {
		Map<String, Declared> missing = new LinkedHashMap<>();
		try {
			Map<String, String> index = this.recurring.ids();
			this.declared.forEach((id, schedule) -> {
				if (!index.containsKey(id) || this.recurring.find(id).isEmpty()) {
					missing.put(id, schedule);
				}
			});
		}
		catch (RuntimeException ex) {
			logger.warn("Could not check the declared recurring schedules: " + ex.getMessage());
			return;
		}
		if (!missing.isEmpty()) {
			logger.warn("Recurring schedule(s) " + missing.keySet() + " declared by this application were missing "
					+ "from Redis (data lost, cleared or removed): registering them again");
			upsert(missing);
		}
	}

	@Override
	public synchronized void stop() {
		if (this.repairs != null) {
			this.repairs.shutdownNow();
			this.repairs = null;
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.repairs != null;
	}

	@Override
	public int getPhase() {
		return this.phase;
	}

}

package dev.delayedtasks.actuate;

import dev.delayedtasks.internal.recurring.RecurringEvents;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Micrometer counters of recurring schedules, tagged with {@code queue} and
 * {@code schedule}: {@code delayed.tasks.recurring.occurrences} (occurrences created),
 * {@code delayed.tasks.recurring.missed} (ticks missed that the misfire policy did not
 * run) and {@code delayed.tasks.recurring.skipped} (occurrences completed without running
 * their handler, tagged with the {@code reason}: {@code overlap}, {@code paused},
 * {@code missed}). Each instance counts what it did: sum over instances.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public final class RecurringMetrics implements RecurringEvents {

	private static final String PREFIX = "delayed.tasks.recurring.";

	private final MeterRegistry registry;

	/**
	 * Create the counters' owner.
	 * @param registry the registry
	 */
	public RecurringMetrics(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void created(String queue, String scheduleId, long count) {
		counter("occurrences", "Occurrences of recurring schedules created", queue, scheduleId).increment(count);
	}

	@Override
	public void missed(String queue, String scheduleId, long count) {
		counter("missed", "Ticks of recurring schedules missed and not run", queue, scheduleId).increment(count);
	}

	@Override
	public void skipped(String queue, String scheduleId, String reason) {
		Counter.builder(PREFIX + "skipped")
			.description("Occurrences of recurring schedules completed without running their handler")
			.tag("queue", queue)
			.tag("schedule", scheduleId)
			.tag("reason", reason)
			.register(this.registry)
			.increment();
	}

	private Counter counter(String name, String description, String queue, String scheduleId) {
		return Counter.builder(PREFIX + name)
			.description(description)
			.tag("queue", queue)
			.tag("schedule", scheduleId)
			.register(this.registry);
	}

}

package dev.delayedtasks.internal.recurring;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.delayedtasks.RecurringSchedule;

/**
 * The recurring schedules this application declares with {@code @Recurring}, collected
 * while beans are created, and merged with those in properties for
 * {@link RecurringScheduleRegistrar} to upsert at startup.
 *
 * @author delayed-tasks
 * @since 0.2.0
 */
public final class RecurringDeclarations {

	private final List<ScheduleDeclaration> declared = new ArrayList<>();

	/**
	 * Add a schedule.
	 * @param declaration the schedule, as declared
	 * @throws IllegalStateException if another declaration has the same id
	 * @throws IllegalArgumentException if the declaration is not a valid schedule
	 */
	public synchronized void add(ScheduleDeclaration declaration) {
		declaration.toSchedule();
		for (ScheduleDeclaration other : this.declared) {
			if (other.id().equals(declaration.id())) {
				throw new IllegalStateException("Recurring schedule '" + declaration.id() + "' is declared twice: by "
						+ other.where() + " and by " + declaration.where());
			}
		}
		this.declared.add(declaration);
	}

	/**
	 * The schedules this application declares: the annotated ones, each overridden field
	 * by field by properties with the same id, then those declared in properties alone;
	 * none whose properties say {@code enabled: false}.
	 * @param configured the schedules in properties, by id, in their order
	 * @param disabled the ids whose properties say {@code enabled: false}
	 * @return the schedules by id
	 * @throws IllegalArgumentException naming the declarations and the problem, for a
	 * schedule that is not valid once merged (such as properties without a queue and no
	 * annotation to take it from)
	 */
	public synchronized Map<String, Declared> resolve(List<ScheduleDeclaration> configured, Set<String> disabled) {
		Map<String, ScheduleDeclaration> merged = new LinkedHashMap<>();
		this.declared.forEach((declaration) -> merged.put(declaration.id(), declaration));
		for (ScheduleDeclaration properties : configured) {
			ScheduleDeclaration annotated = merged.get(properties.id());
			merged.put(properties.id(), (annotated != null) ? properties.over(annotated) : properties);
		}
		disabled.forEach(merged::remove);
		Map<String, Declared> resolved = new LinkedHashMap<>();
		merged.forEach(
				(id, declaration) -> resolved.put(id, new Declared(declaration.toSchedule(), declaration.where())));
		return resolved;
	}

	/**
	 * One declared schedule.
	 *
	 * @param schedule the schedule
	 * @param where where it was declared
	 */
	public record Declared(RecurringSchedule schedule, String where) {

	}

}

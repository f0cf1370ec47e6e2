package dev.delayedtasks.autoconfigure;

import org.springframework.core.convert.converter.Converter;

/**
 * Binds an empty {@code delayed-tasks.queues.<name>=} entry, which declares a queue
 * without overrides, to a {@link DelayedTasksProperties.Queue} with none. Spring Boot 4.1
 * binds such an entry by itself; Spring Boot 4.0 finds no converter from a string, so
 * without this one the declaration fails startup there.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class EmptyQueueEntryConverter implements Converter<String, DelayedTasksProperties.Queue> {

	@Override
	public DelayedTasksProperties.Queue convert(String source) {
		if (!source.isBlank()) {
			throw new IllegalArgumentException("A delayed-tasks.queues.<name> entry is either empty (a declared queue "
					+ "without overrides) or has nested properties (concurrency, timeout, retry.*), not the value '"
					+ source + "'");
		}
		return new DelayedTasksProperties.Queue(null, null, null, null, null, null, null);
	}

}

package dev.delayedtasks.autoconfigure;

import java.time.Duration;
import java.util.List;

import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.Names;
import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/**
 * Checks of the values under one prefix of {@code delayed-tasks.*}. A failure is an
 * {@link IllegalArgumentException} whose message names the property, its value and the
 * rule, such as "delayed-tasks.worker.concurrency is 0: it must be at least 1". Thrown
 * while the properties are bound, Spring Boot reports it as the reason of the binding
 * failure: its message is all the user sees, so it is thrown without a cause (Boot would
 * show the cause's message instead).
 *
 * @author delayed-tasks
 */
final class PropertyChecks {

	private final String prefix;

	PropertyChecks(String prefix) {
		this.prefix = prefix;
	}

	/**
	 * The checks of the values under a nested prefix.
	 * @param name the nested prefix, such as {@code worker}
	 * @return the checks
	 */
	PropertyChecks nested(String name) {
		return new PropertyChecks(name(name));
	}

	/**
	 * The full name of a property under this prefix.
	 * @param property the property, such as {@code concurrency}
	 * @return the name, such as {@code delayed-tasks.worker.concurrency}
	 */
	String name(String property) {
		return this.prefix + "." + property;
	}

	/**
	 * The checks of one queue's overrides, after checking the queue's name.
	 * @param property the map of overrides, such as {@code queues}
	 * @param queue the queue
	 * @return the checks of the values under the queue's key
	 */
	PropertyChecks queue(String property, String queue) {
		try {
			Names.checkQueue(queue);
		}
		catch (InvalidTaskRequestException ex) {
			throw new IllegalArgumentException(
					name(property) + " has overrides for an invalid queue name: " + ex.getMessage());
		}
		// A key with dots is written in brackets: queues[orders.v2].concurrency.
		return nested(queue.matches("[A-Za-z0-9_-]+") ? property + "." + queue : property + "[" + queue + "]");
	}

	void keyPrefix(String property, String value) {
		try {
			Names.checkKeyPrefix(value);
		}
		catch (InvalidTaskRequestException ex) {
			throw new IllegalArgumentException(name(property) + " is invalid: " + ex.getMessage());
		}
	}

	void atLeast(String property, long value, long min) {
		atLeast(property, value, min, null);
	}

	void atLeast(String property, long value, long min, @Nullable String why) {
		if (value < min) {
			throw invalid(property, Long.toString(value), rule("it must be at least " + min, why));
		}
	}

	void between(String property, long value, long min, long max, String why) {
		if (value < min || value > max) {
			throw invalid(property, Long.toString(value), rule("it must be between " + min + " and " + max, why));
		}
	}

	void finiteAtLeast(String property, double value, long min) {
		if (!(value >= min) || Double.isInfinite(value)) {
			throw invalid(property, Double.toString(value), "it must be a finite number of at least " + min);
		}
	}

	void atLeast(String property, Duration value, Duration min, String why) {
		if (value.compareTo(min) < 0) {
			throw invalid(property, print(value), rule("it must be at least " + print(min), why));
		}
	}

	void notNegative(String property, Duration value) {
		if (value.isNegative()) {
			throw invalid(property, print(value), "it must be 0 or more");
		}
	}

	void positive(String property, Duration value) {
		if (value.isNegative() || value.isZero()) {
			throw invalid(property, print(value), "it must be more than 0");
		}
	}

	void positive(String property, DataSize value) {
		if (value.toBytes() <= 0) {
			throw invalid(property, value.toString(), "it must be more than 0B");
		}
	}

	/**
	 * Check that a duration is not below another one that may be set under another
	 * prefix.
	 * @param property the property under this prefix
	 * @param value its value
	 * @param other the full name of the other property
	 * @param min the other property's value
	 */
	void notBelow(String property, Duration value, String other, Duration min) {
		if (value.compareTo(min) < 0) {
			throw invalid(property, print(value), "it must be at least " + other + " (" + print(min) + ")");
		}
	}

	/**
	 * Check that every entry of a list of types names an exception type: the binder turns
	 * any class name into a class, whatever the list's declared bound.
	 * @param property the list
	 * @param types its entries
	 */
	void exceptionTypes(String property, List<? extends Class<?>> types) {
		for (Class<?> type : types) {
			if (!Throwable.class.isAssignableFrom(type)) {
				invalidEntry(property, type.getName(),
						"it must list exception types (java.lang.Throwable or a subclass)");
			}
		}
	}

	/**
	 * Fail for an entry of a list.
	 * @param property the list
	 * @param entry the entry
	 * @param rule why the entry is refused
	 */
	void invalidEntry(String property, String entry, String rule) {
		throw new IllegalArgumentException(name(property) + " contains " + entry + ": " + rule);
	}

	private IllegalArgumentException invalid(String property, String value, String rule) {
		return new IllegalArgumentException(name(property) + " is " + value + ": " + rule);
	}

	private static String rule(String rule, @Nullable String why) {
		return (why != null) ? rule + " (" + why + ")" : rule;
	}

	/**
	 * A duration as it would be written in a property: in its largest exact unit.
	 * @param duration the duration
	 * @return such as {@code 30s}, {@code 500us} or {@code -1ms}
	 */
	static String print(Duration duration) {
		if (duration.getNano() == 0) {
			return print(duration.getSeconds(), new long[] { 86_400, 3_600, 60, 1 },
					new String[] { "d", "h", "m", "s" });
		}
		try {
			return print(duration.toNanos(), new long[] { 1_000_000, 1_000, 1 }, new String[] { "ms", "us", "ns" });
		}
		catch (ArithmeticException ex) {
			return duration.toString();
		}
	}

	private static String print(long amount, long[] units, String[] suffixes) {
		for (int i = 0; i < units.length - 1; i++) {
			if (amount != 0 && amount % units[i] == 0) {
				return (amount / units[i]) + suffixes[i];
			}
		}
		return amount + suffixes[units.length - 1];
	}

}

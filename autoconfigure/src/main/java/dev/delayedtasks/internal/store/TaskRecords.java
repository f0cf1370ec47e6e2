package dev.delayedtasks.internal.store;

import dev.delayedtasks.TaskInfo.TaskError;
import dev.delayedtasks.TaskState;
import org.jspecify.annotations.Nullable;

/**
 * Reads the stored fields of a task: its state letter, numbers, and the error record
 * {@code e:<id>}. The error record has two layouts, both read:
 * <ul>
 * <li>{@code reason\ntype\nmessage}: every record without a stack trace, and every record
 * written before stack traces were kept;</li>
 * <li>U+001E (record separator) followed by {@code reason\ntype\ntrace\n\nmessage}: a
 * dead letter with a stack trace. The leading record separator ({@link #TRACE_MARKER})
 * tells the layouts apart, because a reason is one of the library's own words and never
 * starts with it. The trace has no blank line ({@link BoundedStackTrace}), so the first
 * blank line ends it; the message, which may hold anything, comes last.</li>
 * </ul>
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class TaskRecords {

	/** The first character of an error record that holds a stack trace. */
	static final char TRACE_MARKER = '\u001E';

	private TaskRecords() {
	}

	/**
	 * The state a task hash's {@code s} field stands for.
	 * @param letter the field's value
	 * @return the state, or {@code null} for none or an unknown letter (a tombstone)
	 */
	public static @Nullable TaskState state(@Nullable Object letter) {
		if (letter == null) {
			return null;
		}
		return switch (letter.toString()) {
			case "S" -> TaskState.SCHEDULED;
			case "R" -> TaskState.READY;
			case "A" -> TaskState.ACTIVE;
			case "D" -> TaskState.DEAD;
			default -> null;
		};
	}

	/**
	 * A numeric field.
	 * @param value the field's value
	 * @return the number, 0 when missing or not a number
	 */
	public static long number(@Nullable Object value) {
		if (value == null) {
			return 0;
		}
		try {
			return Long.parseLong(value.toString());
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

	/**
	 * The error of an error record, as the API shows it.
	 * @param record the record {@code e:<id>}
	 * @return the error, or {@code null} without a record
	 */
	public static @Nullable TaskError error(@Nullable String record) {
		ErrorRecord parsed = parse(record);
		return (parsed != null) ? new TaskError(parsed.reason(), parsed.exceptionType(), parsed.message()) : null;
	}

	/**
	 * Read an error record in either layout.
	 * @param record the record {@code e:<id>}
	 * @return its fields, or {@code null} without a record
	 */
	public static @Nullable ErrorRecord parse(@Nullable String record) {
		if (record == null) {
			return null;
		}
		if (record.isEmpty() || record.charAt(0) != TRACE_MARKER) {
			String[] parts = record.split("\n", 3);
			return new ErrorRecord(parts[0], part(parts, 1), part(parts, 2), "");
		}
		String[] parts = record.substring(1).split("\n", 3);
		String rest = part(parts, 2);
		int end = rest.indexOf("\n\n");
		return (end >= 0) ? new ErrorRecord(parts[0], part(parts, 1), rest.substring(end + 2), rest.substring(0, end))
				: new ErrorRecord(parts[0], part(parts, 1), "", rest);
	}

	private static String part(String[] parts, int index) {
		return (parts.length > index) ? parts[index] : "";
	}

	/**
	 * An error record as stored.
	 *
	 * @param reason why the task failed or was dead-lettered
	 * @param exceptionType the exception's class name, or {@code ""}
	 * @param message the exception's message, or {@code ""}
	 * @param stackTrace the bounded stack trace, or {@code ""}
	 */
	public record ErrorRecord(String reason, String exceptionType, String message, String stackTrace) {

	}

}

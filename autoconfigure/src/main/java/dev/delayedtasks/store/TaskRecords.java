package dev.delayedtasks.store;

import dev.delayedtasks.TaskInfo.TaskError;
import dev.delayedtasks.TaskState;
import org.jspecify.annotations.Nullable;

/**
 * Reads the stored fields of a task: its state letter, numbers, and the error record
 * {@code reason\ntype\nmessage}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class TaskRecords {

	private TaskRecords() {
	}

	static @Nullable TaskState state(@Nullable Object letter) {
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

	static long number(@Nullable Object value) {
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

	static @Nullable TaskError error(@Nullable String record) {
		if (record == null) {
			return null;
		}
		String[] parts = record.split("\n", 3);
		return new TaskError(parts[0], (parts.length > 1) ? parts[1] : "", (parts.length > 2) ? parts[2] : "");
	}

}

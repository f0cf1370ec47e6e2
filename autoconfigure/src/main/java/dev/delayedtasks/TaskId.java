package dev.delayedtasks;

import java.util.concurrent.ThreadLocalRandom;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import tools.jackson.databind.JsonNode;

/**
 * The id of a task, unique within its queue. Generated ids are 14 URL-safe characters
 * that sort by creation time (8 characters of epoch milliseconds in base 62, then 6
 * random ones). Callers may supply their own ids, for example {@code order-42-reminder},
 * which makes scheduling idempotent while the task exists.
 *
 * @param value the id
 * @author delayed-tasks
 * @since 0.1.0
 */
public record TaskId(@JsonValue String value) {

	private static final String DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

	/**
	 * Create an id, checking it against the rules of {@link Names#checkTaskId(String)}.
	 * @param value the id
	 */
	public TaskId {
		Names.checkTaskId(value);
	}

	/**
	 * An id for the given value.
	 * @param value the id
	 * @return the id
	 * @throws InvalidTaskRequestException if the value is not a valid id
	 */
	public static TaskId of(String value) {
		return new TaskId(value);
	}

	/**
	 * A new time-ordered id.
	 * @return the id
	 */
	public static TaskId generate() {
		char[] chars = new char[14];
		long millis = System.currentTimeMillis();
		for (int i = 7; i >= 0; i--) {
			chars[i] = DIGITS.charAt((int) (millis % 62));
			millis /= 62;
		}
		ThreadLocalRandom random = ThreadLocalRandom.current();
		for (int i = 8; i < 14; i++) {
			chars[i] = DIGITS.charAt(random.nextInt(62));
		}
		return new TaskId(new String(chars));
	}

	/**
	 * The id a JSON value stands for: a string, as ids are written, or the object
	 * {@code {"value":"..."}} that builds before 0.1.0 wrote, which task payloads stored
	 * then may still hold.
	 */
	@JsonCreator(mode = JsonCreator.Mode.DELEGATING)
	private static TaskId fromJson(JsonNode json) {
		// A tree, not an Object: an application mapper's default typing never applies.
		JsonNode value = (json.isObject() && json.size() == 1) ? json.get("value") : json;
		if (value == null || !value.isString()) {
			throw new IllegalArgumentException("A task id is a JSON string, not " + json);
		}
		return of(value.asString());
	}

	@Override
	public String toString() {
		return this.value;
	}

}

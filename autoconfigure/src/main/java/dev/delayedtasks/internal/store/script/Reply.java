package dev.delayedtasks.internal.store.script;

import java.util.List;

/**
 * Reads the flat arrays the scripts return.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class Reply {

	private final List<Object> values;

	/**
	 * Wrap a decoded reply.
	 * @param values the reply's entries
	 */
	public Reply(List<Object> values) {
		this.values = values;
	}

	/**
	 * How many entries the reply has.
	 * @return the count
	 */
	public int size() {
		return this.values.size();
	}

	/**
	 * An entry as a number.
	 * @param index the entry
	 * @return its value
	 */
	public long number(int index) {
		Object value = this.values.get(index);
		return (value instanceof Long number) ? number : Long.parseLong(value.toString());
	}

	/**
	 * An entry as text.
	 * @param index the entry
	 * @return its value, empty for a Lua {@code false}
	 */
	public String text(int index) {
		Object value = this.values.get(index);
		return (value != null) ? value.toString() : "";
	}

	/**
	 * The first character of an entry: the scripts' one-letter codes.
	 * @param index the entry
	 * @return the character, {@code ?} for an empty entry
	 */
	public char code(int index) {
		String text = text(index);
		return text.isEmpty() ? '?' : text.charAt(0);
	}

	@Override
	public String toString() {
		return this.values.toString();
	}

}

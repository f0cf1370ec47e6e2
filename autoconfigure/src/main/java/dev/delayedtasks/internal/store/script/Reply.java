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

	public Reply(List<Object> values) {
		this.values = values;
	}

	public int size() {
		return this.values.size();
	}

	public long number(int index) {
		Object value = this.values.get(index);
		return (value instanceof Long number) ? number : Long.parseLong(value.toString());
	}

	public String text(int index) {
		Object value = this.values.get(index);
		return (value != null) ? value.toString() : "";
	}

	public char code(int index) {
		String text = text(index);
		return text.isEmpty() ? '?' : text.charAt(0);
	}

	@Override
	public String toString() {
		return this.values.toString();
	}

}

package dev.delayedtasks;

/**
 * The rules for queue names, task ids and the key prefix, which become parts of Redis
 * keys: 1 to 64 characters, letters, digits, {@code .}, {@code -}, {@code _} (and
 * {@code :} in ids and the prefix). No braces, whitespace or control characters, so a
 * name can never change a key's Cluster hash tag.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class Names {

	/** The longest queue name or task id. */
	public static final int MAX_LENGTH = 64;

	private Names() {
	}

	/**
	 * Check a queue name.
	 * @param queue the name
	 * @return the name
	 * @throws InvalidTaskRequestException naming the value and the rule when it is
	 * invalid
	 */
	public static String checkQueue(String queue) {
		return check("Queue name", queue, false);
	}

	/**
	 * Check a task id.
	 * @param id the id
	 * @return the id
	 * @throws InvalidTaskRequestException naming the value and the rule when it is
	 * invalid
	 */
	public static String checkTaskId(String id) {
		return check("Task id", id, true);
	}

	/**
	 * Check a rate key ({@link TaskRequest#rateKey(String)}).
	 * @param rateKey the key
	 * @return the key
	 * @throws InvalidTaskRequestException naming the value and the rule when it is
	 * invalid
	 */
	public static String checkRateKey(String rateKey) {
		return check("Rate key", rateKey, true);
	}

	/**
	 * Check a key prefix ({@code delayed-tasks.key-prefix}).
	 * @param prefix the prefix
	 * @return the prefix
	 * @throws InvalidTaskRequestException naming the value and the rule when it is
	 * invalid
	 */
	public static String checkKeyPrefix(String prefix) {
		// Braces in the prefix would come before the queue's hash tag and replace it: an
		// empty "{}" spreads one queue's keys over several Cluster slots.
		return check("Key prefix", prefix, true);
	}

	private static String check(String what, String value, boolean colonAllowed) {
		if (value == null) {
			throw new InvalidTaskRequestException(what + " must not be null");
		}
		String rule = "use 1-" + MAX_LENGTH + " letters, digits, '.', '-', '_'" + (colonAllowed ? ", ':'" : "");
		if (value.isEmpty() || value.length() > MAX_LENGTH) {
			throw new InvalidTaskRequestException(
					what + " '" + printable(value) + "' is invalid: it has " + value.length() + " characters; " + rule);
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
					|| c == '-' || c == '_' || (colonAllowed && c == ':');
			if (!ok) {
				throw new InvalidTaskRequestException(what + " '" + printable(value) + "' is invalid: character '"
						+ printable(String.valueOf(c)) + "' at index " + i + " is not allowed; " + rule);
			}
		}
		return value;
	}

	private static String printable(String value) {
		StringBuilder out = new StringBuilder();
		value.codePoints().limit(MAX_LENGTH + 16L).forEach((c) -> {
			if (Character.isISOControl(c)) {
				out.append(String.format("\\u%04x", c));
			}
			else {
				out.appendCodePoint(c);
			}
		});
		return (value.length() > MAX_LENGTH + 16) ? out + "..." : out.toString();
	}

}

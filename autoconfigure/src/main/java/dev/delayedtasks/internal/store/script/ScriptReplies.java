package dev.delayedtasks.internal.store.script;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Turns a script reply as Redis sent it (bulk strings as {@code byte[]}) into the form
 * the readers of replies take: bulk strings as {@code String}, integers as {@code Long},
 * nested arrays as lists, a Lua {@code false} as {@code null}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class ScriptReplies {

	private ScriptReplies() {
	}

	/**
	 * Decode a reply.
	 * @param reply the reply
	 * @return the decoded reply, a new list
	 */
	public static List<Object> decode(List<?> reply) {
		List<Object> decoded = new ArrayList<>(reply.size());
		for (Object value : reply) {
			decoded.add(decodeValue(value));
		}
		return decoded;
	}

	private static @Nullable Object decodeValue(@Nullable Object value) {
		if (value instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		if (value instanceof List<?> list) {
			return decode(list);
		}
		return value;
	}

}

package dev.delayedtasks.internal.store.script;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A script file: its leading comment block, and its code with comments removed.
 */
public final class LuaFile {

	private static final Pattern KEYS_TITLE = Pattern.compile("KEYS \\(fixed (\\d+), per item (\\d+)\\)");

	private static final Pattern NUMBERED_KEY = Pattern.compile("^--\\s+(\\d+)\\s+(\\S+)\\s");

	private static final Pattern PER_ITEM_KEY = Pattern.compile("\\b([a-z]+):<[a-z]+>");

	final String text;

	final List<String> header;

	public final String code;

	public LuaFile(String text) {
		this.text = text;
		List<String> lines = text.lines().toList();
		List<String> headerLines = new ArrayList<>();
		for (String line : lines) {
			if (!line.startsWith("--")) {
				break;
			}
			headerLines.add(line);
		}
		this.header = headerLines;
		this.code = stripComments(text);
	}

	/**
	 * The script as sent to Redis, with its includes inlined.
	 */
	static LuaFile inlined(Script script) {
		return new LuaFile(StoreScripts.source(script));
	}

	/**
	 * The script's file, as written (its header is only there).
	 */
	public static LuaFile load(Script script) {
		try (InputStream in = StoreScripts.class.getResourceAsStream(script.fileName())) {
			assertThat(in).as(script.fileName()).isNotNull();
			return new LuaFile(new String(in.readAllBytes(), StandardCharsets.UTF_8));
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * The header's {@code Reply:} entry, with its continuation lines joined by single
	 * spaces.
	 */
	String reply() {
		StringBuilder reply = null;
		for (String line : this.header) {
			if (line.startsWith("-- Reply:")) {
				reply = new StringBuilder(line.substring("-- Reply:".length()).trim());
			}
			else if (reply != null && line.startsWith("--   ")) {
				reply.append(' ').append(line.substring(2).trim());
			}
			else if (reply != null) {
				break;
			}
		}
		assertThat(reply).as("'-- Reply:' in the header").isNotNull();
		return reply.toString();
	}

	String firstStatement() {
		return this.text.lines()
			.skip(this.header.size())
			.map(String::trim)
			.filter((line) -> !line.isEmpty() && !line.startsWith("--"))
			.findFirst()
			.orElse("");
	}

	/**
	 * The numbered fixed keys of the header ({@code --   3 lease  ZSET ...}), checked to
	 * be numbered 1, 2, 3 ... in order.
	 */
	public List<String> fixedKeyNames() {
		List<String> names = new ArrayList<>();
		boolean inKeys = false;
		for (String line : this.header) {
			if (KEYS_TITLE.matcher(line).find()) {
				inKeys = true;
				continue;
			}
			if (inKeys && (line.startsWith("-- ARGV") || line.startsWith("--   per item")
					|| line.startsWith("--   derived"))) {
				break;
			}
			Matcher numbered = NUMBERED_KEY.matcher(line);
			if (inKeys && numbered.find()) {
				assertThat(Integer.parseInt(numbered.group(1))).as(line).isEqualTo(names.size() + 1);
				names.add(numbered.group(2));
			}
		}
		return names;
	}

	/**
	 * The per-item keys of the header ({@code --   per item: t:<id> HASH task, ...}).
	 */
	List<String> perItemKeyNames() {
		List<String> names = new ArrayList<>();
		for (String line : this.header) {
			if (line.startsWith("--   per item:")) {
				Matcher key = PER_ITEM_KEY.matcher(line);
				while (key.find()) {
					names.add(key.group());
				}
			}
		}
		return names;
	}

	private static String stripComments(String text) {
		StringBuilder out = new StringBuilder();
		int i = 0;
		char quote = 0;
		while (i < text.length()) {
			char c = text.charAt(i);
			if (quote != 0) {
				out.append(c);
				if (c == '\\' && i + 1 < text.length()) {
					out.append(text.charAt(i + 1));
					i += 2;
					continue;
				}
				if (c == quote) {
					quote = 0;
				}
				i++;
			}
			else if (c == '\'' || c == '"') {
				quote = c;
				out.append(c);
				i++;
			}
			else if (text.startsWith("--[[", i)) {
				int end = text.indexOf("]]", i + 4);
				i = (end < 0) ? text.length() : end + 2;
			}
			else if (text.startsWith("--", i)) {
				int end = text.indexOf('\n', i);
				i = (end < 0) ? text.length() : end;
			}
			else {
				out.append(c);
				i++;
			}
		}
		return out.toString();
	}

}

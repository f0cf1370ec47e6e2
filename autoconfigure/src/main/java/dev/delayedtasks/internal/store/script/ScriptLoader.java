package dev.delayedtasks.internal.store.script;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Reads a Lua script from the classpath and inlines the shared code it includes, as
 * BullMQ's {@code script-loader.ts} does for its {@code src/commands/*.lua}. Redis runs
 * one self-contained text per script, so code that several scripts need ({@code pread},
 * the {@code TIME} preamble, the promote-and-reap block of {@code claim} and
 * {@code promote}) lives once in {@code includes/<name>.lua} beside the scripts and is
 * pulled in by a line of its own:
 *
 * <pre class="code">
 * --- &#64;include "pread"
 * </pre>
 *
 * The line is replaced by the include's text, which may include others in turn. Each
 * include is inlined once per script, where it is first named; a later directive for it
 * is dropped. An include that (indirectly) includes itself, a missing include and a
 * malformed directive fail with an {@link IllegalStateException} that names the script
 * and the chain of includes. The inlined text is what is sent to Redis, so its SHA-1 is
 * the one {@code EVALSHA} uses. An include defines locals for the script and touches no
 * {@code KEYS} or {@code ARGV} itself: it uses the locals its {@code -- uses:} line
 * names, which the script declares before the directive. Redis reports errors by line of
 * the inlined text.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class ScriptLoader {

	/** The folder of the scripts, on the classpath. */
	public static final String SCRIPTS = "dev/delayedtasks/internal/store/script/";

	/** The folder of the includes, relative to the scripts' folder. */
	public static final String INCLUDES = "includes/";

	private static final Pattern DIRECTIVE = Pattern
		.compile("^[ \\t]*---[ \\t]*@include[ \\t]+\"([A-Za-z][\\w-]*)\"[ \\t]*$");

	/** Anything that looks like a directive, to reject the malformed ones. */
	private static final Pattern LOOKS_LIKE_DIRECTIVE = Pattern.compile("^[ \\t]*--+[ \\t]*@include\\b");

	private final String location;

	private final @Nullable ClassLoader classLoader;

	private final ScriptClock clock;

	private final Map<String, String> includeTexts = new HashMap<>();

	/**
	 * A loader of the library's scripts.
	 * @param clock the clock the {@code now} include reads
	 */
	ScriptLoader(ScriptClock clock) {
		this(SCRIPTS, ScriptLoader.class.getClassLoader(), clock);
	}

	/**
	 * A loader of scripts in another folder.
	 * @param location the scripts' folder on the classpath, ending with {@code /}
	 * @param classLoader the class loader to read it with
	 * @param clock the clock the {@code now} include reads
	 */
	ScriptLoader(String location, @Nullable ClassLoader classLoader, ScriptClock clock) {
		this.location = location;
		this.classLoader = classLoader;
		this.clock = clock;
	}

	/**
	 * Whether a line is an include directive.
	 * @param line a line of a script
	 * @return {@code true} for a well-formed or malformed directive
	 */
	static boolean isDirective(String line) {
		return LOOKS_LIKE_DIRECTIVE.matcher(line).find();
	}

	/**
	 * The text of a script as it is sent to Redis: the file with its includes inlined.
	 * @param fileName the script's file name in the scripts' folder, for example
	 * {@code claim.lua}
	 * @return the text
	 * @throws IllegalStateException when an include is missing, malformed or cyclic
	 * @throws UncheckedIOException when the script cannot be read
	 */
	String load(String fileName) {
		String text = read(this.location + fileName);
		if (text == null) {
			throw new UncheckedIOException("Cannot read the Lua script " + fileName,
					new IOException(this.location + fileName + " is not on the classpath"));
		}
		StringBuilder out = new StringBuilder(text.length() * 2);
		expand(fileName, text, new ArrayList<>(List.of(fileName)), new HashSet<>(), out);
		return out.toString();
	}

	private void expand(String script, String text, List<String> chain, Set<String> included, StringBuilder out) {
		int start = 0;
		while (start < text.length()) {
			int end = text.indexOf('\n', start);
			int next = (end < 0) ? text.length() : end + 1;
			String line = text.substring(start, (end < 0) ? text.length() : end);
			if (line.endsWith("\r")) {
				line = line.substring(0, line.length() - 1);
			}
			if (isDirective(line)) {
				include(script, line, chain, included, out);
			}
			else {
				out.append(text, start, next);
			}
			start = next;
		}
	}

	private void include(String script, String line, List<String> chain, Set<String> included, StringBuilder out) {
		Matcher directive = DIRECTIVE.matcher(line);
		if (!directive.matches()) {
			throw new IllegalStateException("Lua script " + describe(chain) + " has a malformed include directive '"
					+ line.trim() + "': write it as a line of its own, --- @include \"name\"");
		}
		String name = directive.group(1);
		if (chain.contains(name)) {
			throw new IllegalStateException("Lua script " + script + " has an include cycle: "
					+ String.join(" -> ", chain) + " -> " + name + ": remove one of these directives");
		}
		if (!included.add(name)) {
			return;
		}
		String file = "now".equals(name) ? this.clock.include() : name;
		String path = this.location + INCLUDES + file + ".lua";
		String text = this.includeTexts.computeIfAbsent(file, (key) -> read(path));
		if (text == null) {
			throw new IllegalStateException("Lua script " + describe(chain) + " includes \"" + name + "\", but " + path
					+ " is not on the classpath: add the file or correct the name");
		}
		chain.add(name);
		expand(script, text, chain, included, out);
		chain.remove(chain.size() - 1);
		if (!text.isEmpty() && !text.endsWith("\n")) {
			out.append('\n');
		}
	}

	/**
	 * The script, and the include being read when it is not the script itself:
	 * {@code claim.lua (via promoteAndReap)}.
	 * @param chain the script, then the includes that led to the one being read
	 * @return the description
	 */
	private static String describe(List<String> chain) {
		return (chain.size() == 1) ? chain.get(0)
				: chain.get(0) + " (via " + String.join(" -> ", chain.subList(1, chain.size())) + ")";
	}

	/**
	 * Read a file from the classpath with the class loader alone, so that
	 * {@link FunctionLibrary#main} runs with nothing but this jar on the classpath.
	 * @param path the file
	 * @return its text, or {@code null} when it is not on the classpath
	 */
	private @Nullable String read(String path) {
		ClassLoader classLoader = (this.classLoader != null) ? this.classLoader : ClassLoader.getSystemClassLoader();
		try (InputStream in = classLoader.getResourceAsStream(path)) {
			return (in != null) ? new String(in.readAllBytes(), StandardCharsets.UTF_8) : null;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the Lua file " + path, ex);
		}
	}

}

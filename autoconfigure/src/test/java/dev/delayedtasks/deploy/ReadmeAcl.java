package dev.delayedtasks.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * An ACL line the documentation gives operators, read from {@code docs/deployment.md}
 * itself so that the documentation and the tests cannot drift apart: the line for scripts
 * run with {@code EVALSHA}/{@code EVAL} ({@link #read()}) and the line for Functions mode
 * ({@link #readFunctions()}). The lines are written for the default key prefix {@code dt}
 * and the password {@code change-me}.
 */
final class ReadmeAcl {

	static final String USER = "delayed-tasks";

	static final String PASSWORD = "change-me";

	/**
	 * The keys under the key prefix: the partitions, the queue index, the recurring
	 * index.
	 */
	static final List<String> KEY_PATTERNS = List.of("~dt:{*", "~dt:queues", "~dt:recurring");

	/** The channels of the outcome trackers, under the key prefix. */
	static final String CHANNEL_PATTERN = "&dt:tracker:*";

	private static final String DEPLOYMENT_PAGE = "docs/deployment.md";

	private final String line;

	private ReadmeAcl(String line) {
		this.line = line;
	}

	/**
	 * The line for scripts run with {@code EVALSHA}/{@code EVAL}.
	 */
	static ReadmeAcl read() {
		return read("+evalsha");
	}

	/**
	 * The line for Functions mode.
	 */
	static ReadmeAcl readFunctions() {
		return read("+fcall");
	}

	/**
	 * Find docs/deployment.md in the project root, above the module a test runs in, and
	 * the one {@code user delayed-tasks} line that grants the given rule.
	 */
	private static ReadmeAcl read(String rule) {
		Path directory = Path.of("").toAbsolutePath();
		while (directory != null && !(Files.isRegularFile(directory.resolve("README.md"))
				&& Files.isRegularFile(directory.resolve("mvnw")))) {
			directory = directory.getParent();
		}
		if (directory == null) {
			throw new IllegalStateException("No README.md beside mvnw above " + Path.of("").toAbsolutePath());
		}
		try {
			List<String> lines = Files.readAllLines(directory.resolve(DEPLOYMENT_PAGE))
				.stream()
				.filter((candidate) -> candidate.startsWith("user " + USER + " ")
						&& Arrays.asList(candidate.strip().split("\\s+")).contains(rule))
				.toList();
			if (lines.size() != 1) {
				throw new IllegalStateException(DEPLOYMENT_PAGE + " should give exactly one 'user " + USER
						+ " ...' ACL line with " + rule + ", but has " + lines.size());
			}
			return new ReadmeAcl(lines.get(0).strip());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	String line() {
		return this.line;
	}

	/**
	 * The commands the line grants ({@code +cmd}), lower case.
	 */
	Set<String> commands() {
		Set<String> commands = new TreeSet<>();
		for (String token : tokens()) {
			if (token.startsWith("+")) {
				commands.add(token.substring(1).toLowerCase(Locale.ROOT));
			}
		}
		return commands;
	}

	/**
	 * The rules after the user name, for {@code ACL SETUSER}, with the README's key
	 * pattern and password replaced.
	 */
	List<String> rules(String keyPrefix, String password) {
		List<String> tokens = tokens();
		List<String> rules = new ArrayList<>(tokens.subList(2, tokens.size()));
		for (String pattern : KEY_PATTERNS) {
			replaceOnce(rules, pattern, "~" + keyPrefix + pattern.substring("~dt".length()));
		}
		replaceOnce(rules, CHANNEL_PATTERN, "&" + keyPrefix + ":tracker:*");
		replaceOnce(rules, ">" + PASSWORD, ">" + password);
		return rules;
	}

	private List<String> tokens() {
		return Arrays.asList(this.line.split("\\s+"));
	}

	private static void replaceOnce(List<String> rules, String from, String to) {
		if (rules.stream().filter(from::equals).count() != 1) {
			throw new IllegalStateException("The documented ACL line should contain '" + from + "' once: " + rules);
		}
		rules.set(rules.indexOf(from), to);
	}

}

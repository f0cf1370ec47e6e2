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
 * The ACL line the README gives operators, read from {@code README.md} itself so that the
 * documentation and the tests cannot drift apart. The line is written for the default key
 * prefix {@code dt} and the password {@code change-me}.
 */
final class ReadmeAcl {

	static final String USER = "delayed-tasks";

	static final String PASSWORD = "change-me";

	static final String KEY_PATTERN = "~dt:*";

	private final String line;

	private ReadmeAcl(String line) {
		this.line = line;
	}

	/**
	 * Find README.md in the project root, above the module a test runs in.
	 */
	static ReadmeAcl read() {
		Path directory = Path.of("").toAbsolutePath();
		while (directory != null && !(Files.isRegularFile(directory.resolve("README.md"))
				&& Files.isRegularFile(directory.resolve("mvnw")))) {
			directory = directory.getParent();
		}
		if (directory == null) {
			throw new IllegalStateException("No README.md beside mvnw above " + Path.of("").toAbsolutePath());
		}
		try {
			List<String> lines = Files.readAllLines(directory.resolve("README.md"))
				.stream()
				.filter((candidate) -> candidate.startsWith("user " + USER + " "))
				.toList();
			if (lines.size() != 1) {
				throw new IllegalStateException(
						"README.md should give exactly one 'user " + USER + " ...' ACL line, but has " + lines.size());
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
		replaceOnce(rules, KEY_PATTERN, "~" + keyPrefix + ":*");
		replaceOnce(rules, ">" + PASSWORD, ">" + password);
		return rules;
	}

	private List<String> tokens() {
		return Arrays.asList(this.line.split("\\s+"));
	}

	private static void replaceOnce(List<String> rules, String from, String to) {
		if (rules.stream().filter(from::equals).count() != 1) {
			throw new IllegalStateException("The README's ACL line should contain '" + from + "' once: " + rules);
		}
		rules.set(rules.indexOf(from), to);
	}

}

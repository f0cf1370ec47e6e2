package dev.delayedtasks.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * The README's quick start, read from {@code README.md} itself: its code blocks, and its
 * Java sources compiled against the sample's test class path (which holds the starter and
 * Spring MVC, as the quick start's application does), so that the README cannot drift
 * from the code.
 */
final class QuickStart {

	private static final Pattern BLOCK = Pattern.compile("(?ms)^```(\\w+)\\n(.*?)^```");

	private static final Pattern PACKAGE = Pattern.compile("(?m)^package ([\\w.]+);");

	private static final Pattern TYPE = Pattern
		.compile("(?m)^public (?:final )?(?:class|record|interface|enum) (\\w+)");

	private final String section;

	private QuickStart(String section) {
		this.section = section;
	}

	/**
	 * Read the "Quick start" section of the README in the project root.
	 * @return the quick start
	 */
	static QuickStart read() {
		Path readme = Path.of("..", "README.md");
		try {
			String text = Files.readString(readme, StandardCharsets.UTF_8);
			int start = text.indexOf("\n## Quick start\n");
			if (start < 0) {
				throw new IllegalStateException("README.md has no '## Quick start' section");
			}
			int end = text.indexOf("\n## ", start + 1);
			return new QuickStart(text.substring(start, (end < 0) ? text.length() : end));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The contents of the code blocks in the given language, in order.
	 * @param language the language after the opening fence, such as {@code java}
	 * @return the blocks
	 */
	List<String> blocks(String language) {
		List<String> blocks = new ArrayList<>();
		Matcher block = BLOCK.matcher(this.section);
		while (block.find()) {
			if (block.group(1).equals(language)) {
				blocks.add(block.group(2));
			}
		}
		return blocks;
	}

	/**
	 * Write every Java block to a source file of its package and public type, and compile
	 * them all.
	 * @param directory where sources and classes go
	 * @return the compiler's errors and warnings, empty when it compiled cleanly
	 * @throws IOException if the sources cannot be written
	 */
	List<String> compile(Path directory) throws IOException {
		Path sources = directory.resolve("src");
		Path classes = Files.createDirectories(directory.resolve("classes"));
		List<Path> files = new ArrayList<>();
		for (String block : blocks("java")) {
			Matcher packageName = PACKAGE.matcher(block);
			Matcher type = TYPE.matcher(block);
			if (!packageName.find() || !type.find()) {
				throw new IllegalStateException("A Java block of the quick start lacks a package or a public type, "
						+ "so it cannot be copied into a file as it is:\n" + block);
			}
			Path file = sources.resolve(packageName.group(1).replace('.', '/')).resolve(type.group(1) + ".java");
			Files.createDirectories(file.getParent());
			Files.writeString(file, block, StandardCharsets.UTF_8);
			files.add(file);
		}
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
		try (StandardJavaFileManager fileManager = compiler.getStandardFileManager(diagnostics, Locale.ROOT,
				StandardCharsets.UTF_8)) {
			List<String> options = List.of("-proc:none", "-Xlint:all", "-parameters", "--release", "17", "-classpath",
					testClassPath(), "-d", classes.toString());
			compiler
				.getTask(null, fileManager, diagnostics, options, null, fileManager.getJavaFileObjectsFromPaths(files))
				.call();
		}
		return diagnostics.getDiagnostics()
			.stream()
			.filter((diagnostic) -> diagnostic.getKind() != Diagnostic.Kind.NOTE)
			.map((diagnostic) -> diagnostic.getKind() + " " + diagnostic.getSource().getName() + ":"
					+ diagnostic.getLineNumber() + ": " + diagnostic.getMessage(Locale.ROOT))
			.toList();
	}

	private static String testClassPath() {
		// Surefire runs tests from a manifest-only jar; it names the real class path
		// here.
		String surefire = System.getProperty("surefire.test.class.path");
		return (surefire != null && !surefire.isBlank()) ? surefire : System.getProperty("java.class.path");
	}

}

package dev.delayedtasks.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The "Application API and internals" row of docs/api.md for
 * {@code dev.delayedtasks.testing} lists exactly the public types of that package; every
 * other public type of this module lives in a package under
 * {@code dev.delayedtasks.internal}, whose Javadoc says it is internal.
 */
class ApiSurfaceTests {

	private static final Path SOURCES = Path.of("src/main/java");

	private static final Pattern PUBLIC_TYPE = Pattern.compile(
			"^public (?:final |abstract |sealed )*(?:class|interface|record|enum|@interface) (\\w+)",
			Pattern.MULTILINE);

	private static final Pattern ROW = Pattern
		.compile("^\\| `dev\\.delayedtasks\\.testing` \\(in `delayed-tasks-test`\\) \\| (.*) \\|$", Pattern.MULTILINE);

	@Test
	void theReadmeListsThePublicTypesOfTheApiPackageAndTheRestIsInternal() throws IOException {
		String readme = Files.readString(Path.of("../docs/api.md"), StandardCharsets.UTF_8);
		Matcher row = ROW.matcher(readme.substring(readme.indexOf("## Application API and internals")));
		assertThat(row.find()).as("the docs/api.md row for dev.delayedtasks.testing").isTrue();
		Set<String> documented = new TreeSet<>();
		Matcher name = Pattern.compile("`(\\w+)`").matcher(row.group(1));
		while (name.find()) {
			documented.add("dev.delayedtasks.testing." + name.group(1));
		}
		Set<String> api = new TreeSet<>();
		try (Stream<Path> files = Files.walk(SOURCES)) {
			for (Path file : files.filter((path) -> path.toString().endsWith(".java")).toList()) {
				Matcher type = PUBLIC_TYPE.matcher(Files.readString(file, StandardCharsets.UTF_8));
				if (!type.find()) {
					continue;
				}
				String pkg = SOURCES.relativize(file.getParent()).toString().replace('/', '.');
				if (pkg.equals("dev.delayedtasks.testing")) {
					api.add(pkg + "." + type.group(1));
				}
				else {
					assertThat(pkg).as("package of public type %s", type.group(1))
						.startsWith("dev.delayedtasks.internal.");
					assertThat(Files.readString(file.getParent().resolve("package-info.java"), StandardCharsets.UTF_8))
						.as("Javadoc of %s, which holds public type %s", pkg, type.group(1))
						.contains("<strong>Internal.</strong>");
				}
			}
		}
		assertThat(api).isEqualTo(documented);
	}

}

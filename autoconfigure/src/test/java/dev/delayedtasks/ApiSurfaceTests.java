package dev.delayedtasks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The "Application API and internals" table of docs/api.md is the application API: every
 * public type of the runtime is either listed there, or lives in a package under
 * {@code dev.delayedtasks.internal} (so that the import line says it is internal), or is
 * an auto-configuration; and every listed type exists and is public. A new public type
 * therefore needs a decision: document it as API, or keep it internal.
 */
class ApiSurfaceTests {

	private static final Path SOURCES = Path.of("src/main/java");

	private static final String INTERNAL = "dev.delayedtasks.internal.";

	private static final Pattern PUBLIC_TYPE = Pattern.compile(
			"^public (?:final |abstract |sealed )*(?:class|interface|record|enum|@interface) (\\w+)",
			Pattern.MULTILINE);

	private static final Pattern TABLE_ROW = Pattern.compile("^\\| `(dev\\.delayedtasks[\\w.]*)` \\| (.*) \\|$",
			Pattern.MULTILINE);

	private static final Pattern TYPE_NAME = Pattern.compile("`(\\w+)`");

	@Test
	void everyPublicTypeIsDocumentedApiOrInAnInternalPackage() throws IOException {
		Set<String> api = documentedApi();
		List<String> undecided = new ArrayList<>();
		for (String type : publicTypes()) {
			if (!api.contains(type) && !isInInternalPackage(type) && !isAutoConfiguration(type)) {
				undecided.add(type);
			}
		}
		assertThat(undecided)
			.as("public types neither in the API table of docs/api.md nor in a package marked internal")
			.isEmpty();
	}

	@Test
	void everyDocumentedTypeExistsAndIsPublic() throws IOException {
		assertThat(publicTypes()).containsAll(documentedApi());
	}

	@Test
	void noDocumentedTypeIsInAnInternalPackage() throws IOException {
		assertThat(documentedApi()).noneMatch(ApiSurfaceTests::isInInternalPackage);
	}

	@Test
	void everyInternalPackageSaysSoInItsJavadoc() throws IOException {
		for (String pkg : packages()) {
			if (pkg.startsWith(INTERNAL)) {
				assertThat(packageJavadoc(pkg)).as("Javadoc of %s", pkg).contains("<strong>Internal.</strong>");
			}
		}
	}

	private static Set<String> documentedApi() throws IOException {
		String page = Files.readString(Path.of("../docs/api.md"), StandardCharsets.UTF_8);
		int start = page.indexOf("## Application API and internals");
		assertThat(start).as("the API section of docs/api.md").isNotNegative();
		Set<String> api = new TreeSet<>();
		Matcher row = TABLE_ROW.matcher(page.substring(start));
		while (row.find()) {
			// Only the names before a parenthesis or colon: the rest of a cell explains.
			String names = row.group(2).split("[(:]")[0];
			Matcher name = TYPE_NAME.matcher(names);
			while (name.find()) {
				api.add(row.group(1) + "." + name.group(1));
			}
		}
		assertThat(api).as("types listed in the API table of docs/api.md").isNotEmpty();
		return api;
	}

	private static Set<String> publicTypes() throws IOException {
		Set<String> types = new TreeSet<>();
		try (Stream<Path> files = Files.walk(SOURCES)) {
			for (Path file : files.filter((path) -> path.toString().endsWith(".java")).toList()) {
				String source = Files.readString(file, StandardCharsets.UTF_8);
				Matcher type = PUBLIC_TYPE.matcher(source);
				if (type.find()) {
					String pkg = SOURCES.relativize(file.getParent()).toString().replace('/', '.');
					types.add(pkg + "." + type.group(1));
				}
			}
		}
		return types;
	}

	private static boolean isInInternalPackage(String type) {
		return type.startsWith(INTERNAL);
	}

	private static Set<String> packages() throws IOException {
		Set<String> packages = new TreeSet<>();
		try (Stream<Path> files = Files.walk(SOURCES)) {
			files.filter((path) -> path.toString().endsWith(".java"))
				.forEach((file) -> packages.add(SOURCES.relativize(file.getParent()).toString().replace('/', '.')));
		}
		return packages;
	}

	private static boolean isAutoConfiguration(String type) {
		return type.startsWith("dev.delayedtasks.autoconfigure.") && type.endsWith("AutoConfiguration");
	}

	private static String packageJavadoc(String pkg) throws IOException {
		Path info = SOURCES.resolve(pkg.replace('.', '/')).resolve("package-info.java");
		return Files.exists(info) ? Files.readString(info, StandardCharsets.UTF_8) : "";
	}

}

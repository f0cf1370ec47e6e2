package dev.delayedtasks.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's quick start compiles as written, and its {@code pom.xml} names this
 * build's versions of delayed-tasks and Spring Boot.
 */
class QuickStartTests {

	private static final Pattern STARTER_VERSION = Pattern
		.compile("<artifactId>delayed-tasks-spring-boot-starter</artifactId>\\s*<version>([^<]+)</version>");

	private static final Pattern PROJECT_VERSION = Pattern
		.compile("<artifactId>delayed-tasks-parent</artifactId>\\s*<version>([^<]+)</version>");

	/**
	 * The root POM's first {@code spring-boot.version}, its default: a profile may test
	 * another Spring Boot, but the quick start names the one the build is made for.
	 */
	private static final Pattern BOOT_VERSION = Pattern.compile("<spring-boot.version>([^<]+)</spring-boot.version>");

	private static final Pattern BOOT_PARENT_VERSION = Pattern
		.compile("<artifactId>spring-boot-starter-parent</artifactId>\\s*<version>([^<]+)</version>");

	@Test
	void theJavaCodeCompilesWithoutWarnings(@TempDir Path directory) throws IOException {
		QuickStart quickStart = QuickStart.read();
		assertThat(quickStart.blocks("java")).as("Java blocks of the quick start").hasSizeGreaterThanOrEqualTo(4);
		List<String> problems = quickStart.compile(directory);
		assertThat(problems).as("compiler errors and warnings").isEmpty();
		assertThat(directory.resolve("classes/com/example/reminders/ReminderHandler.class")).exists();
	}

	@Test
	void thePomNamesThisBuildsVersions() throws IOException {
		List<String> poms = QuickStart.read().blocks("xml");
		assertThat(poms).as("the quick start's pom.xml").hasSize(1);
		String pom = poms.get(0);
		// The README may name the snapshot while the release build runs on the release
		// version of the same number (release:prepare verifies before anyone can edit
		// it).
		assertThat(baseVersion(find(STARTER_VERSION, pom))).as("delayed-tasks version in the quick start's pom.xml")
			.isEqualTo(baseVersion(find(PROJECT_VERSION, rootPom())));
		assertThat(find(BOOT_PARENT_VERSION, pom)).as("Spring Boot version in the quick start's pom.xml")
			.isEqualTo(find(BOOT_VERSION, rootPom()));
	}

	private static String find(Pattern pattern, String text) {
		Matcher matcher = pattern.matcher(text);
		assertThat(matcher.find()).as(pattern.pattern()).isTrue();
		return matcher.group(1);
	}

	private static String baseVersion(String version) {
		return version.replaceFirst("-SNAPSHOT$", "");
	}

	private static String rootPom() throws IOException {
		return Files.readString(Path.of("..", "pom.xml"));
	}

}

package dev.delayedtasks.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of the README, the changelog and the pages under {@code docs/}
 * leads to a file that exists and, when it names a section, to a heading of that file
 * (anchors made the way GitHub makes them), so that splitting or renaming a page cannot
 * leave dead links behind.
 */
class DocumentationLinksTests {

	private static final Path ROOT = Path.of("..");

	private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

	private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.+?)\\s*$");

	@Test
	void everyRelativeLinkLeadsToAFileAndSectionThatExist() throws IOException {
		List<Path> pages = pages();
		assertThat(pages).as("documentation pages").hasSizeGreaterThanOrEqualTo(10);
		Map<Path, Set<String>> anchors = new HashMap<>();
		List<String> dead = new ArrayList<>();
		int checked = 0;
		for (Path page : pages) {
			for (String target : links(page)) {
				if (target.matches("^[a-z]+:.*")) {
					continue;
				}
				checked++;
				int hash = target.indexOf('#');
				String file = (hash >= 0) ? target.substring(0, hash) : target;
				Path linked = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
				if (!Files.exists(linked)) {
					dead.add(page + ": " + target + " (no such file)");
				}
				else if (hash >= 0 && !anchors.computeIfAbsent(linked, DocumentationLinksTests::anchors)
					.contains(target.substring(hash + 1))) {
					dead.add(page + ": " + target + " (no such section)");
				}
			}
		}
		assertThat(checked).as("relative links checked").isGreaterThan(50);
		assertThat(dead).as("dead links").isEmpty();
	}

	@Test
	void anchorsAreMadeAsGitHubMakesThem() {
		assertThat(anchor("Actuator endpoint `delayedtasks`")).isEqualTo("actuator-endpoint-delayedtasks");
		assertThat(anchor("Redis versions: the Lua sandbox fixes")).isEqualTo("redis-versions-the-lua-sandbox-fixes");
		assertThat(anchor("Without blocking: `...Async` and `ReactiveDelayedTaskScheduler`"))
			.isEqualTo("without-blocking-async-and-reactivedelayedtaskscheduler");
		assertThat(anchor("Functions mode (Redis 7+)")).isEqualTo("functions-mode-redis-7");
	}

	private static List<Path> pages() throws IOException {
		List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CHANGELOG.md")));
		try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		return pages;
	}

	/**
	 * The link targets of a page, outside its code blocks.
	 */
	private static List<String> links(Path page) throws IOException {
		List<String> links = new ArrayList<>();
		boolean inCode = false;
		for (String line : Files.readAllLines(page)) {
			if (line.stripLeading().startsWith("```")) {
				inCode = !inCode;
			}
			else if (!inCode) {
				Matcher matcher = LINK.matcher(line.replaceAll("`[^`]*`", ""));
				while (matcher.find()) {
					links.add(matcher.group(1));
				}
			}
		}
		return links;
	}

	private static Set<String> anchors(Path page) {
		Set<String> anchors = new HashSet<>();
		Map<String, Integer> seen = new HashMap<>();
		boolean inCode = false;
		try {
			for (String line : Files.readAllLines(page)) {
				if (line.stripLeading().startsWith("```")) {
					inCode = !inCode;
					continue;
				}
				Matcher heading = HEADING.matcher(line);
				if (!inCode && heading.matches()) {
					String anchor = anchor(heading.group(1));
					int count = seen.merge(anchor, 1, Integer::sum);
					anchors.add((count == 1) ? anchor : anchor + "-" + (count - 1));
				}
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot read " + page, ex);
		}
		return anchors;
	}

	private static String anchor(String heading) {
		return heading.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
	}

}

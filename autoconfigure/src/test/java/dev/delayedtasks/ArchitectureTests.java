package dev.delayedtasks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The layers of docs/architecture.md hold in the code: every package belongs to one
 * component, a component uses only the components below it (so there are no cycles), the
 * API uses nothing of the runtime and the store nothing but the API, and the page names
 * every package. Dependencies are read from the import lines, which are the only way one
 * package names another here (checkstyle refuses a type named by its package inline).
 */
class ArchitectureTests {

	private static final Path SOURCES = Path.of("src/main/java");

	private static final Pattern IMPORT = Pattern.compile("^import (?:static )?(dev\\.delayedtasks[\\w.]*?)\\.[A-Z]",
			Pattern.MULTILINE);

	private static final String API = "api";

	private static final String STORE = "store";

	/** Each component, its packages, and the components it may use. */
	private static final Map<String, Component> COMPONENTS = components(new Component(API,
			List.of("dev.delayedtasks", "dev.delayedtasks.annotation", "dev.delayedtasks.observation"), Set.of()),
			new Component(STORE,
					List.of("dev.delayedtasks.internal.store", "dev.delayedtasks.internal.store.script",
							"dev.delayedtasks.internal.store.codec"),
					Set.of(API)),
			new Component("tracking", List.of("dev.delayedtasks.internal.tracking"), Set.of(API, STORE)),
			new Component("admin", List.of("dev.delayedtasks.internal.admin"), Set.of(API, STORE)),
			new Component("server", List.of("dev.delayedtasks.internal.server"), Set.of(API, STORE)),
			new Component("producer", List.of("dev.delayedtasks.internal.producer"), Set.of(API, STORE, "tracking")),
			new Component("worker", List.of("dev.delayedtasks.worker", "dev.delayedtasks.internal.worker"),
					Set.of(API, STORE)),
			new Component("recurring", List.of("dev.delayedtasks.internal.recurring"), Set.of(API, STORE, "worker")),
			new Component("annotation", List.of("dev.delayedtasks.internal.annotation"),
					Set.of(API, "worker", "recurring")),
			new Component("actuate", List.of("dev.delayedtasks.actuate", "dev.delayedtasks.internal.actuate"),
					Set.of(API, STORE, "admin", "worker", "recurring")),
			new Component("autoconfigure", List.of("dev.delayedtasks.autoconfigure"), Set.of(API, STORE, "tracking",
					"admin", "server", "producer", "worker", "recurring", "annotation", "actuate")));

	@Test
	void everyPackageBelongsToAComponent() throws IOException {
		assertThat(dependencies().keySet()).allSatisfy((pkg) -> assertThat(componentOf(pkg))
			.as("component of package %s (add it to ArchitectureTests and docs/architecture.md)", pkg)
			.isNotNull());
	}

	@Test
	void aComponentUsesOnlyTheComponentsBelowIt() throws IOException {
		List<String> violations = new ArrayList<>();
		dependencies().forEach((pkg, used) -> {
			Component component = componentOf(pkg);
			for (String target : used) {
				Component other = componentOf(target);
				if (component != null && other != null && other != component
						&& !component.uses().contains(other.name())) {
					violations.add(pkg + " (" + component.name() + ") uses " + target + " (" + other.name() + ")");
				}
			}
		});
		assertThat(violations).isEmpty();
	}

	@Test
	void theApiUsesNoRuntimePackageAndTheStoreOnlyTheApi() {
		assertThat(COMPONENTS.get(API).uses()).isEmpty();
		assertThat(COMPONENTS.get(STORE).uses()).containsExactly(API);
	}

	@Test
	void theComponentsFormNoCycle() {
		for (Component component : COMPONENTS.values()) {
			assertThat(reachable(component.name())).as("components reachable from %s", component.name())
				.doesNotContain(component.name());
		}
	}

	@Test
	void withinTheStoreScriptsAndCodecUseNothingElseOfIt() throws IOException {
		Map<String, Set<String>> dependencies = dependencies();
		for (String leaf : List.of("dev.delayedtasks.internal.store.script", "dev.delayedtasks.internal.store.codec")) {
			assertThat(dependencies.getOrDefault(leaf, Set.of())).as("packages %s uses", leaf)
				.allMatch((pkg) -> componentOf(pkg) == COMPONENTS.get(API));
		}
	}

	@Test
	void theArchitecturePageNamesEveryPackage() throws IOException {
		String page = Files.readString(Path.of("../docs/architecture.md"), StandardCharsets.UTF_8);
		assertThat(dependencies().keySet()).allSatisfy((pkg) -> assertThat(page).contains("`" + pkg + "`"));
	}

	private static Set<String> reachable(String from) {
		Set<String> seen = new TreeSet<>();
		List<String> next = new ArrayList<>(COMPONENTS.get(from).uses());
		while (!next.isEmpty()) {
			String name = next.remove(next.size() - 1);
			if (seen.add(name)) {
				next.addAll(COMPONENTS.get(name).uses());
			}
		}
		return seen;
	}

	private static Component componentOf(String pkg) {
		for (Component component : COMPONENTS.values()) {
			if (component.packages().contains(pkg)) {
				return component;
			}
		}
		return null;
	}

	/** Each package of the runtime and the other packages of the runtime it imports. */
	private static Map<String, Set<String>> dependencies() throws IOException {
		Map<String, Set<String>> dependencies = new TreeMap<>();
		try (Stream<Path> files = Files.walk(SOURCES)) {
			for (Path file : files.filter((path) -> path.toString().endsWith(".java")).toList()) {
				String pkg = SOURCES.relativize(file.getParent()).toString().replace('/', '.');
				Set<String> used = dependencies.computeIfAbsent(pkg, (key) -> new TreeSet<>());
				Matcher imported = IMPORT.matcher(Files.readString(file, StandardCharsets.UTF_8));
				while (imported.find()) {
					if (!imported.group(1).equals(pkg)) {
						used.add(imported.group(1));
					}
				}
			}
		}
		return dependencies;
	}

	private static Map<String, Component> components(Component... components) {
		Map<String, Component> byName = new LinkedHashMap<>();
		for (Component component : components) {
			byName.put(component.name(), component);
		}
		return byName;
	}

	private record Component(String name, List<String> packages, Set<String> uses) {

	}

}

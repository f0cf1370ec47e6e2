package dev.delayedtasks.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The IDE metadata the build writes ({@code META-INF/spring-configuration-metadata.json}:
 * what the configuration processor generates from {@link DelayedTasksProperties}, merged
 * with {@code additional-spring-configuration-metadata.json}): descriptions written as
 * Spring Boot writes its own, the health indicator's switch, hints for the exception
 * lists, and per-queue keys that IDEs can complete from the map's value type, because the
 * metadata format cannot list the keys under a map entry.
 */
class ConfigurationMetadataTests {

	private static final String QUEUES_TYPE = "java.util.Map<java.lang.String,"
			+ DelayedTasksProperties.Queue.class.getName() + ">";

	private final JsonNode metadata = read();

	@Test
	void descriptionsAreCapitalisedPlainTextSentences() {
		List<JsonNode> properties = ours();
		assertThat(properties).hasSizeGreaterThan(20);
		for (JsonNode property : properties) {
			String name = property.get("name").asString();
			assertThat(property.has("description")).as("description of %s", name).isTrue();
			assertThat(property.get("description").asString()).as("description of %s", name)
				.matches("[A-Z].*\\.")
				.doesNotContain("{@")
				.doesNotContain("<code>");
		}
	}

	@Test
	void theHealthIndicatorsSwitchIsDescribed() {
		JsonNode enabled = property("management.health.delayedtasks.enabled");
		assertThat(enabled.get("type").asString()).isEqualTo("java.lang.Boolean");
		assertThat(enabled.get("defaultValue").asBoolean()).isTrue();
	}

	@Test
	void theExceptionListsHintAtThrowableTypes() {
		for (String name : List.of("delayed-tasks.retry.exception-includes",
				"delayed-tasks.retry.exception-excludes")) {
			JsonNode provider = hint(name).get("providers").get(0);
			assertThat(provider.get("name").asString()).as(name).isEqualTo("class-reference");
			assertThat(provider.get("parameters").get("target").asString()).as(name)
				.isEqualTo(Throwable.class.getName());
		}
		assertThat(hint("delayed-tasks.eviction-policy-check").get("values"))
			.extracting((value) -> value.get("value").asString())
			.containsExactly("fail", "warn", "off");
	}

	@Test
	void perQueueKeysAreTheValueTypeOfTheQueuesMapAndCoverEveryRetryKey() {
		assertThat(property("delayed-tasks.queues").get("type").asString()).isEqualTo(QUEUES_TYPE);
		assertThat(components(DelayedTasksProperties.Queue.class)).containsExactly("concurrency", "timeout", "retry",
				"results", "rate-limit", "global-concurrency", "key-rate-limit");
		Set<String> globalRetryKeys = ours().stream()
			.map((property) -> property.get("name").asString())
			.filter((name) -> name.startsWith("delayed-tasks.retry."))
			.map((name) -> name.substring("delayed-tasks.retry.".length()))
			.collect(Collectors.toCollection(TreeSet::new));
		assertThat(new TreeSet<>(components(DelayedTasksProperties.RetryOverrides.class)))
			.as("keys under delayed-tasks.queues.<name>.retry")
			.isEqualTo(globalRetryKeys);
	}

	private static List<String> components(Class<? extends Record> type) {
		return Arrays.stream(type.getRecordComponents())
			.map((component) -> component.getName().replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT))
			.toList();
	}

	private List<JsonNode> ours() {
		List<JsonNode> ours = new ArrayList<>();
		for (JsonNode property : this.metadata.get("properties")) {
			String name = property.get("name").asString();
			if (name.startsWith("delayed-tasks.") || name.startsWith("management.health.delayedtasks.")) {
				ours.add(property);
			}
		}
		return ours;
	}

	private JsonNode property(String name) {
		for (JsonNode property : this.metadata.get("properties")) {
			if (property.get("name").asString().equals(name)) {
				return property;
			}
		}
		throw new AssertionError("No metadata for " + name);
	}

	private JsonNode hint(String name) {
		for (JsonNode hint : this.metadata.get("hints")) {
			if (hint.get("name").asString().equals(name)) {
				return hint;
			}
		}
		throw new AssertionError("No hint for " + name);
	}

	private static JsonNode read() {
		try (InputStream in = ConfigurationMetadataTests.class.getClassLoader()
			.getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
			assertThat(in).as("META-INF/spring-configuration-metadata.json").isNotNull();
			return JsonMapper.shared().readTree(in);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}

package dev.delayedtasks;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No main source of any module uses Java serialization or Jackson default typing: both
 * let stored data choose which classes are instantiated, and a task's payload type must
 * come only from its handler's declared parameter. The scan covers every module of the
 * build, found from the root POM, so a new module is covered without editing this test.
 */
class SecuritySurfaceTests {

	/** What is forbidden, by a short name, as a pattern that matches one line. */
	private static final Map<String, Pattern> FORBIDDEN = forbidden();

	private static final Set<String> EXPECTED_MODULES = Set.of("test-support", "autoconfigure", "starter", "dashboard",
			"sample-app", "benchmarks");

	private static final Set<String> TEXT_EXTENSIONS = Set.of(".java", ".kt", ".properties", ".yml", ".yaml", ".xml",
			".imports", ".factories", ".lua", ".json");

	private static final Pattern MODULE = Pattern.compile("<module>\\s*([^<\\s]+)\\s*</module>");

	private static Map<String, Pattern> forbidden() {
		Map<String, Pattern> patterns = new LinkedHashMap<>();
		patterns.put("ObjectInputStream", Pattern.compile("\\bObjectInputStream\\b"));
		patterns.put("ObjectOutputStream", Pattern.compile("\\bObjectOutputStream\\b"));
		patterns.put("readObject(", Pattern.compile("\\breadObject\\s*\\("));
		patterns.put("Serializable", Pattern.compile("\\b(Serializable|Externalizable)\\b"));
		patterns.put("JdkSerializationRedisSerializer", Pattern.compile("\\bJdkSerializationRedisSerializer\\b"));
		patterns.put("RedisSerializer.java()", Pattern.compile("\\bRedisSerializer\\s*\\.\\s*java\\s*\\("));
		// Spring Data Redis's generic JSON serializers write and trust class names
		// (default typing), and RedisSerializer.json() is one of them.
		patterns.put("GenericJackson*RedisSerializer", Pattern.compile("\\bGenericJackson\\w*RedisSerializer\\b"));
		patterns.put("RedisSerializer.json()", Pattern.compile("\\bRedisSerializer\\s*\\.\\s*json\\s*\\("));
		// "\b" keeps PayloadCodec's deactivateDefaultTyping() allowed.
		patterns.put("activateDefaultTyping", Pattern.compile("\\bactivateDefaultTyping"));
		patterns.put("enableDefaultTyping", Pattern.compile("\\benableDefaultTyping"));
		patterns.put("DefaultTyping", Pattern.compile("\\bDefaultTyping\\b"));
		patterns.put("@JsonTypeInfo", Pattern.compile("\\bJsonTypeInfo\\b"));
		patterns.put("PolymorphicTypeValidator", Pattern.compile("PolymorphicTypeValidator\\b"));
		return patterns;
	}

	@Test
	void noMainSourceUsesJavaSerializationOrJacksonDefaultTyping() throws IOException {
		Path root = projectRoot();
		List<String> findings = new ArrayList<>();
		for (Path file : mainSources(root)) {
			String text = Files.readString(file, StandardCharsets.UTF_8);
			findings.addAll(scan(root.relativize(file).toString(), text));
		}
		assertThat(findings).as("Java serialization or Jackson default typing in main sources").isEmpty();
	}

	@Test
	void theScanCoversEveryModuleOfTheBuild() throws IOException {
		Path root = projectRoot();
		assertThat(modules(root)).containsAll(EXPECTED_MODULES);
		List<Path> sources = mainSources(root);
		assertThat(sources).extracting((file) -> root.relativize(file).toString().replace('\\', '/'))
			.contains("autoconfigure/src/main/java/dev/delayedtasks/internal/store/codec/PayloadCodec.java",
					"sample-app/src/main/java/dev/delayedtasks/sample/SampleApplication.java",
					"test-support/src/main/java/dev/delayedtasks/test/RedisServers.java",
					"benchmarks/src/main/java/dev/delayedtasks/benchmarks/BenchmarkApplication.java",
					"sample-app/src/main/resources/application.yml");
	}

	@Test
	void theScanReportsEveryForbiddenConstructWithFileAndLine() {
		String source = String.join("\n", "package bad;", "import java.io.ObjectInputStream;",
				"class A implements java.io.Serializable {", "  Object o = in.readObject ();",
				"  new ObjectOutputStream(out);", "  new JdkSerializationRedisSerializer();",
				"  RedisSerializer.java();", "  new GenericJackson2JsonRedisSerializer(mapper);",
				"  new GenericJacksonJsonRedisSerializer(mapper);", "  RedisSerializer.json();",
				"  mapper.activateDefaultTyping(validator);", "  mapper.enableDefaultTyping();",
				"  builder.activateDefaultTypingAsProperty(v, ObjectMapper.DefaultTyping.NON_FINAL, \"@class\");",
				"  @JsonTypeInfo(use = Id.CLASS)", "  BasicPolymorphicTypeValidator.builder();",
				"  class B implements Externalizable {}", "}");
		List<String> findings = scan("bad/A.java", source);
		assertThat(findings).contains("bad/A.java:2: ObjectInputStream: import java.io.ObjectInputStream;",
				"bad/A.java:3: Serializable: class A implements java.io.Serializable {",
				"bad/A.java:4: readObject(: Object o = in.readObject ();",
				"bad/A.java:5: ObjectOutputStream: new ObjectOutputStream(out);",
				"bad/A.java:6: JdkSerializationRedisSerializer: new JdkSerializationRedisSerializer();",
				"bad/A.java:7: RedisSerializer.java(): RedisSerializer.java();",
				"bad/A.java:8: GenericJackson*RedisSerializer: new GenericJackson2JsonRedisSerializer(mapper);",
				"bad/A.java:9: GenericJackson*RedisSerializer: new GenericJacksonJsonRedisSerializer(mapper);",
				"bad/A.java:10: RedisSerializer.json(): RedisSerializer.json();",
				"bad/A.java:11: activateDefaultTyping: mapper.activateDefaultTyping(validator);",
				"bad/A.java:12: enableDefaultTyping: mapper.enableDefaultTyping();",
				"bad/A.java:14: @JsonTypeInfo: @JsonTypeInfo(use = Id.CLASS)",
				"bad/A.java:15: PolymorphicTypeValidator: BasicPolymorphicTypeValidator.builder();",
				"bad/A.java:16: Serializable: class B implements Externalizable {}");
		assertThat(findings).filteredOn((finding) -> finding.startsWith("bad/A.java:13: "))
			.containsExactly(
					"bad/A.java:13: activateDefaultTyping: builder.activateDefaultTypingAsProperty(v, ObjectMapper.DefaultTyping.NON_FINAL, \"@class\");",
					"bad/A.java:13: DefaultTyping: builder.activateDefaultTypingAsProperty(v, ObjectMapper.DefaultTyping.NON_FINAL, \"@class\");");
		assertThat(FORBIDDEN.keySet())
			.allSatisfy((name) -> assertThat(findings).anyMatch((finding) -> finding.contains(": " + name + ": ")));
	}

	@Test
	void theScanLeavesLookAlikesAlone() {
		String source = String.join("\n", "this.mapper = mapper.rebuild().deactivateDefaultTyping().build();",
				"record SerializableThing(String readObjectName) {}", "new StringRedisSerializer();",
				"// payloads are written as JSON; no class names");
		assertThat(scan("ok/B.java", source)).isEmpty();
	}

	/**
	 * Every forbidden construct on every line of a text.
	 * @param name the file name to report
	 * @param text the file's text
	 * @return one {@code name:line: construct: line} entry per finding
	 */
	static List<String> scan(String name, String text) {
		List<String> findings = new ArrayList<>();
		String[] lines = text.split("\\R", -1);
		for (int i = 0; i < lines.length; i++) {
			for (Map.Entry<String, Pattern> entry : FORBIDDEN.entrySet()) {
				Matcher matcher = entry.getValue().matcher(lines[i]);
				if (matcher.find()) {
					findings.add(name + ":" + (i + 1) + ": " + entry.getKey() + ": " + lines[i].strip());
				}
			}
		}
		return findings;
	}

	/**
	 * The build's root: the nearest directory above this test's classes whose POM lists
	 * modules. Found from the class location, not the working directory, so the test
	 * works the same from Maven and from an IDE.
	 */
	private static Path projectRoot() {
		try {
			Path start = Path
				.of(SecuritySurfaceTests.class.getProtectionDomain().getCodeSource().getLocation().toURI());
			for (Path dir = start; dir != null; dir = dir.getParent()) {
				Path pom = dir.resolve("pom.xml");
				if (Files.isRegularFile(pom) && MODULE.matcher(Files.readString(pom)).find()) {
					return dir;
				}
			}
			throw new IllegalStateException("No pom.xml with <modules> above " + start);
		}
		catch (IOException | URISyntaxException ex) {
			throw new IllegalStateException("Cannot locate the project root", ex);
		}
	}

	private static List<String> modules(Path root) throws IOException {
		Matcher matcher = MODULE.matcher(Files.readString(root.resolve("pom.xml")));
		List<String> modules = new ArrayList<>();
		while (matcher.find()) {
			modules.add(matcher.group(1));
		}
		return modules;
	}

	private static List<Path> mainSources(Path root) throws IOException {
		List<Path> sources = new ArrayList<>();
		for (String module : modules(root)) {
			Path main = root.resolve(module).resolve("src/main");
			if (Files.isDirectory(main)) {
				try (Stream<Path> files = Files.walk(main)) {
					files.filter(Files::isRegularFile).filter(SecuritySurfaceTests::isText).forEach(sources::add);
				}
			}
		}
		return sources;
	}

	private static boolean isText(Path file) {
		String name = file.getFileName().toString();
		return TEXT_EXTENSIONS.stream().anyMatch(name::endsWith);
	}

}

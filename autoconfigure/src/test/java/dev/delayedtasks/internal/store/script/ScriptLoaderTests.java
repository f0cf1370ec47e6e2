package dev.delayedtasks.internal.store.script;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link ScriptLoader} inlines {@code --- @include "name"} directives, each include once
 * per script, and fails with a message naming the script and the include when one is
 * missing, cyclic or malformed. The library's scripts are self-contained once inlined,
 * and their includes only use locals the including script declared before them.
 */
class ScriptLoaderTests {

	private static final String FIXTURES = "dev/delayedtasks/internal/store/script/loader/";

	private static final Pattern USES = Pattern.compile("^-- uses: (.+)$");

	private final ScriptLoader fixtures = new ScriptLoader(FIXTURES, ScriptLoaderTests.class.getClassLoader(),
			ScriptClock.REDIS);

	@Test
	void inlinesEachIncludeInPlaceOfItsDirectiveAndTheIncludesOfIncludesRecursively() {
		assertThat(this.fixtures.load("main.lua")).isEqualTo("""
				-- main: a script with includes
				redis.replicate_commands()
				-- a: returns b()
				-- b: returns 1
				local function b() return 1 end
				local function a() return b() end
				return a()
				""");
	}

	@Test
	void inlinesAnIncludeOncePerScriptWhereItIsFirstNamed() {
		assertThat(this.fixtures.load("twice.lua")).isEqualTo("""
				-- b: returns 1
				local function b() return 1 end
				-- a: returns b()
				local function a() return b() end
				return a() + b()
				""");
	}

	@Test
	void aMissingIncludeIsAnErrorNamingTheScriptAndTheInclude() {
		assertThatIllegalStateException().isThrownBy(() -> this.fixtures.load("missing.lua"))
			.withMessage("Lua script missing.lua includes \"nope\", but " + FIXTURES
					+ "includes/nope.lua is not on the classpath: add the file or correct the name");
	}

	@Test
	void aMissingIncludeOfAnIncludeNamesTheChain() {
		assertThatIllegalStateException().isThrownBy(() -> this.fixtures.load("nestedMissing.lua"))
			.withMessageStartingWith("Lua script nestedMissing.lua (via c) includes \"nope\", but " + FIXTURES
					+ "includes/nope.lua is not on the classpath");
	}

	@Test
	void anIncludeCycleIsAnErrorNamingTheCycle() {
		assertThatIllegalStateException().isThrownBy(() -> this.fixtures.load("cycle.lua"))
			.withMessage("Lua script cycle.lua has an include cycle: cycle.lua -> x -> y -> x: "
					+ "remove one of these directives");
	}

	@Test
	void aMalformedDirectiveIsAnErrorRatherThanAComment() {
		assertThatIllegalStateException().isThrownBy(() -> this.fixtures.load("malformed.lua"))
			.withMessage("Lua script malformed.lua has a malformed include directive '--- @include a': "
					+ "write it as a line of its own, --- @include \"name\"");
	}

	@Test
	void aMissingScriptIsAnErrorNamingIt() {
		assertThatExceptionOfType(UncheckedIOException.class).isThrownBy(() -> this.fixtures.load("absent.lua"))
			.withMessage("Cannot read the Lua script absent.lua");
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void everyScriptIsSelfContainedOnceInlined(Script script) throws IOException {
		String raw = new String(ScriptLoaderTests.class.getClassLoader()
			.getResourceAsStream(ScriptLoader.SCRIPTS + script.fileName())
			.readAllBytes(), StandardCharsets.UTF_8);
		String inlined = StoreScripts.source(script);
		assertThat(raw.lines().filter(ScriptLoader::isDirective)).as("include directives in %s", script.fileName())
			.isNotEmpty();
		assertThat(inlined.lines().filter(ScriptLoader::isDirective))
			.as("unresolved include directives in the inlined %s", script.fileName())
			.isEmpty();
		for (Include include : libraryIncludes()) {
			assertThat(occurrences(inlined, include.firstLine()))
				.as("copies of include %s in %s", include.name(), script.fileName())
				.isLessThanOrEqualTo(1);
		}
	}

	@ParameterizedTest
	@EnumSource(Script.class)
	void theLocalsAnIncludeUsesAreDeclaredBeforeIt(Script script) throws IOException {
		String inlined = StoreScripts.source(script);
		for (Include include : libraryIncludes()) {
			int at = inlined.indexOf(include.firstLine());
			if (at < 0) {
				continue;
			}
			String before = inlined.substring(0, at);
			for (String name : include.uses()) {
				// A name not declared local before the function that uses it is a global:
				// nil, and an error only on the path that reaches it.
				Pattern declaration = Pattern.compile("(?m)^[ \\t]*local[ \\t]+(?:function[ \\t]+" + name
						+ "\\b|(?:\\w+[ \\t]*,[ \\t]*)*" + name + "[ \\t]*[,=])");
				assertThat(declaration.matcher(before).find())
					.as("local %s declared in %s before include %s", name, script.fileName(), include.name())
					.isTrue();
			}
		}
	}

	@Test
	void everyIncludeIsNamedInItsFirstLineUsedByAScriptAndTouchesNoKeysOrArguments() throws IOException {
		List<Include> includes = libraryIncludes();
		assertThat(includes).extracting(Include::name)
			.contains("pread", "now", "int", "fanout", "releaseUnique", "deleteTask", "promoteAndReap");
		List<String> inlined = Stream
			.concat(Arrays.stream(Script.values()).map(StoreScripts::source),
					Arrays.stream(Script.values()).map((script) -> StoreScripts.source(script, ScriptClock.TEST)))
			.toList();
		for (Include include : includes) {
			assertThat(include.firstLine()).as("first line of include %s", include.name())
				.startsWith("-- " + include.name() + ": ");
			assertThat(inlined).as("scripts that include %s", include.name())
				.anyMatch((text) -> text.contains(include.firstLine()));
			String code = new LuaFile(include.text()).code;
			if (include.name().equals("nowOnTestClock")) {
				// The one exception: the test clock offset lives in the partition's meta
				// hash, found from KEYS[1], a key of the partition in every script
				// (checked by TestClockIncludeTests), so no script has to pass it.
				code = code.replace("KEYS[1]", "");
			}
			assertThat(code).as("code of include %s", include.name()).doesNotContain("KEYS").doesNotContain("ARGV");
		}
	}

	private static List<Include> libraryIncludes() throws IOException {
		Resource[] resources = new PathMatchingResourcePatternResolver(ScriptLoaderTests.class.getClassLoader())
			.getResources("classpath*:" + ScriptLoader.SCRIPTS + ScriptLoader.INCLUDES + "*.lua");
		List<Include> includes = new ArrayList<>();
		for (Resource resource : resources) {
			String fileName = resource.getFilename();
			includes.add(new Include(fileName.substring(0, fileName.length() - ".lua".length()),
					resource.getContentAsString(StandardCharsets.UTF_8)));
		}
		return includes;
	}

	private static int occurrences(String text, String part) {
		int count = 0;
		for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length())) {
			count++;
		}
		return count;
	}

	record Include(String name, String text) {

		String firstLine() {
			return this.text.lines().findFirst().orElse("");
		}

		List<String> uses() {
			return this.text.lines()
				.map(USES::matcher)
				.filter((matcher) -> matcher.matches())
				.flatMap((matcher) -> Arrays.stream(matcher.group(1).split(",\\s*")))
				.map(String::trim)
				.toList();
		}

	}

}

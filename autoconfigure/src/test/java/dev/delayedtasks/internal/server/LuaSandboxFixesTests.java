package dev.delayedtasks.internal.server;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.delayedtasks.internal.store.script.RedisVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Which Redis and Valkey versions lack the fixes for the Lua sandbox vulnerabilities, and
 * what {@link LuaSandboxFixes} tells their users to install.
 */
@ExtendWith(OutputCaptureExtension.class)
class LuaSandboxFixesTests {

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			6.0.20  | the 6.0 line has no fixed release, upgrade to 6.2.20 or newer
			6.2.11  | upgrade to 6.2.20 or newer
			6.2.19  | upgrade to 6.2.20 or newer
			7.0.15  | the 7.0 line has no fixed release, upgrade to 7.2.11 or newer
			7.2.0   | upgrade to 7.2.11 or newer
			7.2.10  | upgrade to 7.2.11 or newer
			7.4.5   | upgrade to 7.4.6 or newer
			8.0.3   | upgrade to 8.0.4 or newer
			8.1.240 | the 8.1 line has no fixed release, upgrade to 8.2.2 or newer
			8.2.1   | upgrade to 8.2.2 or newer
			""")
	void redisBeforeTheFixedReleaseOfItsLineIsToldWhichToInstall(String version, String advice) {
		assertThat(LuaSandboxFixes.upgrade(RedisVersion.parse("redis", version))).hasValue(advice);
	}

	@ParameterizedTest
	@CsvSource({ "redis, 6.2.20", "redis, 6.2.21", "redis, 7.2.11", "redis, 7.4.6", "redis, 8.0.4", "redis, 8.2.2",
			"redis, 8.4.0", "redis, 9.0.0", "valkey, 8.1.4", "valkey, 8.1.5" })
	void fixedReleasesAndLaterLinesGetNoAdvice(String server, String version) {
		assertThat(LuaSandboxFixes.upgrade(RedisVersion.parse(server, version))).isEmpty();
	}

	@Test
	void valkeyIsJudgedByItsOwnReleasesNotByRedisVersionNumbers() {
		assertThat(LuaSandboxFixes.upgrade(RedisVersion.parse("valkey", "8.1.3")))
			.hasValue("upgrade to 8.1.4 or newer");
		// Only Valkey's 8.1 line has a fixed release we could verify: no claim about
		// the others.
		assertThat(LuaSandboxFixes.upgrade(RedisVersion.parse("valkey", "7.2.5"))).isEmpty();
	}

	@Test
	void comparesVersionsNumericallyNotAsText() {
		assertThat(RedisVersion.parse("redis", "6.2.9").isBefore(6, 2, 20)).isTrue();
		assertThat(RedisVersion.parse("redis", "6.2.20").isBefore(6, 2, 20)).isFalse();
		assertThat(RedisVersion.parse("redis", "6.10.0").isBefore(6, 2, 20)).isFalse();
		assertThat(RedisVersion.parse("redis", "10.0.0").compareTo(RedisVersion.parse("redis", "9.9.9"))).isPositive();
	}

	@Test
	void readsVersionsWithoutPatchOrWithASuffix() {
		assertThat(RedisVersion.parse("Redis", "7.2")).isEqualTo(new RedisVersion("redis", 7, 2, 0));
		assertThat(RedisVersion.parse("redis", "8.4.0-rc1")).isEqualTo(new RedisVersion("redis", 8, 4, 0));
		assertThat(RedisVersion.parse("valkey", "255.255.255").isValkey()).isTrue();
		assertThatIllegalArgumentException().isThrownBy(() -> RedisVersion.parse("redis", "unknown"))
			.withMessageContaining("'unknown' is not a Redis version");
	}

	@Test
	void warnsOnceNamingTheCvesAndEveryOutdatedMaster(CapturedOutput output) {
		Map<String, RedisVersion> versions = new LinkedHashMap<>();
		versions.put("10.0.0.1:7000", RedisVersion.parse("redis", "7.2.10"));
		versions.put("10.0.0.2:7000", RedisVersion.parse("redis", "7.2.11"));
		versions.put("10.0.0.3:7000", RedisVersion.parse("redis", "7.0.15"));
		assertThat(LuaSandboxFixes.warnIfUnpatched(versions)).isTrue();
		assertThat(output).contains("WARN")
			.contains("CVE-2025-49844, CVE-2025-46817, CVE-2025-46818 and CVE-2025-46819")
			.contains("10.0.0.1:7000 runs Redis 7.2.10: upgrade to 7.2.11 or newer; 10.0.0.3:7000 runs Redis 7.0.15: "
					+ "the 7.0 line has no fixed release, upgrade to 7.2.11 or newer.")
			.doesNotContain("10.0.0.2:7000");
		assertThat(output.toString().split("Lua sandbox vulnerabilities", -1)).hasSize(2);
	}

	@Test
	void saysNothingWhenEveryMasterIsPatched(CapturedOutput output) {
		assertThat(LuaSandboxFixes.warnIfUnpatched(Map.of("Redis", RedisVersion.parse("redis", "8.2.2")))).isFalse();
		assertThat(output).doesNotContain("Lua sandbox");
	}

}

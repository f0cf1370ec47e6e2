package dev.delayedtasks.internal.server;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.internal.store.script.FunctionLibraries;
import dev.delayedtasks.internal.store.script.FunctionLibrary;
import dev.delayedtasks.internal.store.script.RedisMasters;
import dev.delayedtasks.internal.store.script.RedisVersion;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The startup checks that depend on the server's version, against the real server: the
 * version read with {@code HELLO}, the warning about the Lua sandbox fixes (the test
 * servers, 7.0.15 and 6.2.11, predate them), and Functions mode refused before Redis 7.
 * CI runs this class on Redis 7 and again on 6.2.
 */
@WithRedis
@ExtendWith(OutputCaptureExtension.class)
class RedisServerCheckIntegrationTests {

	private final TestRedis redis;

	private final LettuceConnectionFactory connectionFactory;

	private final RedisMasters masters;

	RedisServerCheckIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.connectionFactory = new LettuceConnectionFactory(
				LettuceConnectionFactory.createRedisConfiguration(redis.uri()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.masters = new RedisMasters(new StringRedisTemplate(this.connectionFactory), Duration.ofSeconds(5));
	}

	@AfterEach
	void close() {
		this.connectionFactory.destroy();
	}

	@Test
	void readsTheServersVersionWithHello() {
		assertThat(this.masters.versions()).hasSize(1).containsValue(RedisVersion.parse("redis", this.redis.version()));
	}

	@Test
	void warnsOnceThatTheServerLacksTheLuaSandboxFixesNamingTheReleaseToInstall(CapturedOutput output) {
		RedisVersion version = RedisVersion.parse("redis", this.redis.version());
		String advice = LuaSandboxFixes.upgrade(version).orElseThrow();
		assertThat(advice).isEqualTo(version.isLine(6, 2) ? "upgrade to 6.2.20 or newer"
				: "the 7.0 line has no fixed release, upgrade to 7.2.11 or newer");
		new RedisServerCheck(this.masters, null).verify();
		assertThat(output).contains("WARN")
			.contains("Redis lacks the fixes for the Lua sandbox vulnerabilities CVE-2025-49844, CVE-2025-46817, "
					+ "CVE-2025-46818 and CVE-2025-46819")
			.contains(master() + " runs Redis " + version + ": " + advice);
		assertThat(output.toString().split("Lua sandbox vulnerabilities", -1)).hasSize(2);
	}

	@Test
	void withTheCheckSetToFailAnUnpatchedServerStopsStartupAndWithOffNothingIsSaid(CapturedOutput output) {
		RedisVersion version = RedisVersion.parse("redis", this.redis.version());
		assertThatExceptionOfType(DelayedTaskException.class)
			.isThrownBy(new RedisServerCheck(this.masters, null, RedisServerCheck.SandboxCheck.FAIL)::verify)
			.withMessageContaining("Redis lacks the fixes for the Lua sandbox vulnerabilities")
			.withMessageContaining(master() + " runs Redis " + version + ": ")
			.withMessageEndingWith("Refusing to start (delayed-tasks.lua-sandbox-check=fail); upgrade Redis, or set "
					+ "it to warn to start anyway");
		new RedisServerCheck(this.masters, null, RedisServerCheck.SandboxCheck.OFF).verify();
		assertThat(output).doesNotContain("Lua sandbox vulnerabilities");
	}

	@Test
	void functionsModeNeedsRedis7(CapturedOutput output) {
		FunctionLibraries libraries = new FunctionLibraries(this.masters, new FunctionLibrary(), true);
		RedisServerCheck check = new RedisServerCheck(this.masters, libraries);
		if (this.redis.version().startsWith("6.")) {
			assertThatExceptionOfType(DelayedTaskException.class).isThrownBy(check::verify)
				.withMessage("delayed-tasks.scripts.mode=functions needs Redis 7.0 or newer (Redis Functions), but "
						+ master() + " runs Redis " + this.redis.version()
						+ ": set delayed-tasks.scripts.mode=eval (the default) for this server");
		}
		else {
			// A shared server: the library may be there already, from another class;
			// if not, it is deleted again, as the test's keys are.
			boolean loadedBefore = libraryLoaded(libraries.library().name());
			check.verify();
			Map<String, Object> answers = this.masters.onEveryMaster((commands) -> commands
				.fcall(libraries.library().pingFunction(), ScriptOutputType.VALUE, new byte[0][]));
			assertThat(answers).containsOnlyKeys(master());
			assertThat(new String((byte[]) answers.get(master()), StandardCharsets.UTF_8))
				.isEqualTo(libraries.library().name());
			if (!loadedBefore) {
				this.masters.onEveryMaster((commands) -> commands.dispatch(CommandType.FUNCTION,
						new StatusOutput<>(ByteArrayCodec.INSTANCE),
						new CommandArgs<>(ByteArrayCodec.INSTANCE).add("DELETE").add(libraries.library().name())));
			}
		}
	}

	private boolean libraryLoaded(String name) {
		return !this.masters.onEveryMaster((commands) -> commands.functionList(name)).get(master()).isEmpty();
	}

	/**
	 * How the checks name the server: the connection's host and port.
	 */
	private String master() {
		return this.redis.uri().getHost() + ":" + this.redis.uri().getPort();
	}

}

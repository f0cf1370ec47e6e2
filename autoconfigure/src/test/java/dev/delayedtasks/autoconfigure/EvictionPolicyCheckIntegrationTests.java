package dev.delayedtasks.autoconfigure;

import java.util.function.Function;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The startup check of Redis's eviction policy, on a private server whose policy (and
 * users) the test changes.
 */
@WithRedis(privateServer = true)
@ExtendWith(OutputCaptureExtension.class)
class EvictionPolicyCheckIntegrationTests {

	private static final String NO_INFO_USER = "no-info";

	private static final String NO_INFO_PASSWORD = "no-info-password";

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	EvictionPolicyCheckIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.url=" + redis.url(), "delayed-tasks.key-prefix=" + redis.keyPrefix(),
					"delayed-tasks.worker.enabled=false");
	}

	@AfterEach
	void restorePolicy() {
		policy("noeviction");
	}

	@Test
	void anAllKeysPolicyStopsStartupAndSaysWhy() {
		policy("allkeys-lru");
		this.runner.run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).isInstanceOf(DelayedTaskException.class)
				.hasMessageContaining("maxmemory-policy is allkeys-lru")
				.hasMessageContaining("noeviction")
				.hasMessageContaining("delayed-tasks.eviction-policy-check=warn");
		});
	}

	@Test
	void luaSandboxCheckFailStopsStartupOnTheUnpatchedTestServer() {
		// The test servers (7.0.15, 6.2.11) predate the fixes.
		this.runner.withPropertyValues("delayed-tasks.lua-sandbox-check=fail").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).isInstanceOf(DelayedTaskException.class)
				.hasMessageContaining("Redis lacks the fixes for the Lua sandbox vulnerabilities")
				.hasMessageContaining("delayed-tasks.lua-sandbox-check=fail");
		});
	}

	@Test
	void anAllKeysPolicyOnlyWarnsWhenConfiguredTo(CapturedOutput output) {
		policy("allkeys-random");
		this.runner.withPropertyValues("delayed-tasks.eviction-policy-check=warn").run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(DelayedTaskScheduler.class);
			assertThat(output).contains("maxmemory-policy is allkeys-random");
		});
	}

	@Test
	void aVolatilePolicyWarnsThatOnlyHelperKeysCanGo(CapturedOutput output) {
		policy("volatile-lru");
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains("maxmemory-policy is volatile-lru: only keys with a TTL can be evicted");
		});
	}

	@Test
	void noevictionStartsSilently(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).doesNotContain("maxmemory-policy");
		});
	}

	@Test
	void theCheckCanBeSwitchedOff(CapturedOutput output) {
		policy("allkeys-lru");
		this.runner.withPropertyValues("delayed-tasks.eviction-policy-check=off")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).doesNotContain("maxmemory-policy is allkeys-lru");
	}

	@Test
	void whereInfoIsDeniedAWarningSaysTheCheckCouldNotRun(CapturedOutput output) {
		// A policy the check would refuse, so a check that ran anyway would stop startup.
		policy("allkeys-lru");
		admin((commands) -> commands.aclSetuser(NO_INFO_USER,
				AclSetuserArgs.Builder.reset()
					.on()
					.addPassword(NO_INFO_PASSWORD)
					.keyPattern(this.redis.keyPrefix() + ":*")
					.allCommands()
					.removeCommand(CommandType.INFO)));
		try {
			new ApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
						JacksonAutoConfiguration.class, DelayedTasksAutoConfiguration.class))
				.withPropertyValues("spring.data.redis.host=" + this.redis.host(),
						"spring.data.redis.port=" + this.redis.port(), "spring.data.redis.username=" + NO_INFO_USER,
						"spring.data.redis.password=" + NO_INFO_PASSWORD,
						"delayed-tasks.key-prefix=" + this.redis.keyPrefix(), "delayed-tasks.worker.enabled=false")
				.run((context) -> {
					assertThat(context).hasNotFailed().hasSingleBean(DelayedTaskScheduler.class);
					assertThat(output).contains("Could not read Redis's maxmemory-policy (INFO memory: ")
						.contains("NOPERM")
						.contains("make sure it is noeviction")
						.doesNotContain("maxmemory-policy is allkeys-lru");
				});
		}
		finally {
			admin((commands) -> commands.aclDeluser(NO_INFO_USER));
		}
	}

	private void policy(String policy) {
		admin((commands) -> commands.configSet("maxmemory-policy", policy));
	}

	private <T> T admin(Function<RedisCommands<String, String>, T> call) {
		RedisClient client = RedisClient.create(this.redis.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return call.apply(connection.sync());
		}
		finally {
			client.shutdown();
		}
	}

}

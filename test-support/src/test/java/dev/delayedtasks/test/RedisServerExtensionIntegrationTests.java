package dev.delayedtasks.test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.SslOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

class RedisServerExtensionIntegrationTests {

	/** What the sample classes below saw, read after EngineTestKit ran them. */
	static final Map<String, TestRedis> seen = new ConcurrentHashMap<>();

	/** Keys left under a class's prefix once the Redis extension finished with it. */
	static final Map<String, Long> keysLeft = new ConcurrentHashMap<>();

	@AfterEach
	void forget() {
		seen.clear();
		keysLeft.clear();
	}

	@Test
	void givesEachClassItsOwnPrefixAndDeletesItsKeysAfterwards() {
		Events events = run(WritesKeys.class);
		events.assertStatistics((stats) -> stats.succeeded(1).failed(0));
		assertThat(seen.get("WritesKeys").keyPrefix()).startsWith("dtt-");
		assertThat(keysLeft).containsEntry("WritesKeys", 0L);
	}

	@Test
	void recordsTheVersionAndKindOfTheRedisEachClassGotForCi() throws Exception {
		run(WritesKeys.class).assertStatistics((stats) -> stats.succeeded(1));
		TestRedis redis = seen.get("WritesKeys");
		Path used = PidFiles.inTarget().directory().resolve(RedisServers.USED_FILE);
		assertThat(Files.readAllLines(used))
			.contains("redis_version=" + redis.version() + " server=" + redis.server().serverVersion().label()
					+ " kind=" + redis.server().kind() + " class=" + WritesKeys.class.getName());
	}

	@Test
	void stopsAPrivateServerAfterItsClassEvenWhenATestFails() {
		Events events = run(FailsOnPrivateServer.class);
		events.assertStatistics((stats) -> stats.failed(1));
		TestRedis redis = seen.get("FailsOnPrivateServer");
		assertThat(redis.server()).isInstanceOf(RedisProcess.class);
		assertThat(RedisProcess.ping(redis.port())).isFalse();
	}

	@Test
	void failsRatherThanSkipsAClassWhoseServerExitsAtStartAndShowsTheServersLog() {
		Events containers = EngineTestKit.engine("junit-jupiter")
			.selectors(selectClass(StartsWithABadArgument.class))
			.execute()
			.containerEvents();
		assertThat(containers.aborted().count()).as("aborted (skipped) containers").isZero();
		assertThat(containers.failed().list()).singleElement()
			.satisfies((event) -> assertThat(event.getPayload(TestExecutionResult.class)
				.flatMap(TestExecutionResult::getThrowable)
				.orElseThrow()).isInstanceOf(RedisStartFailedException.class)
				.hasMessageContaining("redis-server exited")
				.hasMessageContaining("no-such-directive"));
		assertThat(seen).doesNotContainKey("StartsWithABadArgument");
	}

	@Test
	void givesATlsClassAPrivateTlsServerTrustedThroughItsCaAndStopsIt() {
		Events events = run(TalksTls.class);
		events.assertStatistics((stats) -> stats.succeeded(1).failed(0));
		TestRedis redis = seen.get("TalksTls");
		assertThat(redis.url()).isEqualTo("rediss://127.0.0.1:" + redis.port());
		assertThat(redis.caCertificate()).isRegularFile();
		assertThat(keysLeft).containsEntry("TalksTls", 0L);
		assertThat(((RedisProcess) redis.server()).process().isAlive()).isFalse();
	}

	@Test
	void skipsAClassWhoseKindIsNotAvailableHereWithTheReason() {
		RedisServers servers = new RedisServers(Map.of(), PidFiles.inTarget());
		Events events = run(NeedsUrl.class);
		if (servers.url().isEmpty() && System.getenv(RedisServers.URL_VARIABLE) == null) {
			events.assertStatistics((stats) -> stats.succeeded(0));
			// Each test is skipped, not the class as a whole: Surefire and Failsafe
			// report a class aborted as a whole as no tests at all.
			assertThat(events.aborted().list()).hasSize(2)
				.allSatisfy((event) -> assertThat(event.getPayload(TestExecutionResult.class)
					.flatMap(TestExecutionResult::getThrowable)
					.map(Throwable::getMessage)
					.orElse("")).contains(RedisServers.URL_VARIABLE).doesNotContain("\n"));
			assertThat(EngineTestKit.engine("junit-jupiter")
				.selectors(selectClass(NeedsUrl.class))
				.execute()
				.containerEvents()
				.aborted()
				.list()).isEmpty();
		}
	}

	@Test
	void skipsEachTestOfAClassThatTakesItsRedisInItsConstructorWhenTheKindIsNotAvailable() {
		Events events = run(NeedsUrlInConstructor.class);
		if (System.getenv(RedisServers.URL_VARIABLE) == null) {
			events.assertStatistics((stats) -> stats.aborted(1).failed(0).succeeded(0));
		}
	}

	private static Events run(Class<?> testClass) {
		return EngineTestKit.engine("junit-jupiter").selectors(selectClass(testClass)).execute().testEvents();
	}

	/**
	 * A Lettuce client for {@code redis}, trusting its test CA when it speaks TLS.
	 */
	static RedisClient client(TestRedis redis) {
		RedisClient client = RedisClient.create(redis.uri());
		redis.server()
			.caCertificate()
			.ifPresent((ca) -> client.setOptions(ClientOptions.builder()
				.sslOptions(SslOptions.builder().trustManager(ca.toFile()).build())
				.build()));
		return client;
	}

	/**
	 * Declared before {@code @WithRedis}, so its {@code afterAll} runs after the Redis
	 * extension's, while the shared server still runs.
	 */
	static final class CountKeysLeft implements AfterAllCallback {

		@Override
		public void afterAll(ExtensionContext context) {
			TestRedis redis = seen.get(context.getRequiredTestClass().getSimpleName());
			RedisClient client = client(redis);
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				keysLeft.put(context.getRequiredTestClass().getSimpleName(),
						(long) connection.sync().keys(redis.keyPrefix() + "*").size());
			}
			finally {
				client.shutdown();
			}
		}

	}

	@ExtendWith(CountKeysLeft.class)
	@WithRedis
	static class WritesKeys {

		@Test
		void write(TestRedis redis) {
			seen.put("WritesKeys", redis);
			RedisClient client = RedisClient.create(redis.uri());
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				connection.sync().set(redis.keyPrefix() + ":a", "1");
				connection.sync().set(redis.keyPrefix() + ":{b}:c", "2");
				assertThat(connection.sync().keys(redis.keyPrefix() + "*")).hasSize(2);
			}
			finally {
				client.shutdown();
			}
		}

	}

	@WithRedis(privateServer = true)
	static class FailsOnPrivateServer {

		@Test
		void fail(TestRedis redis) {
			seen.put("FailsOnPrivateServer", redis);
			assertThat(RedisProcess.ping(redis.port())).isTrue();
			throw new AssertionError("this test fails on purpose");
		}

	}

	@ExtendWith(CountKeysLeft.class)
	@WithRedis(tls = true)
	static class TalksTls {

		@Test
		void talk(TestRedis redis) {
			seen.put("TalksTls", redis);
			assertThat(RedisProcess.ping(redis.port())).as("plain PING on the TLS port").isFalse();
			RedisClient client = client(redis);
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				connection.sync().set(redis.keyPrefix() + ":a", "1");
				assertThat(connection.sync().keys(redis.keyPrefix() + "*")).hasSize(1);
			}
			finally {
				client.shutdown();
			}
		}

	}

	@WithRedis(privateServer = true, arguments = { "--no-such-directive", "yes" })
	static class StartsWithABadArgument {

		@Test
		void never(TestRedis redis) {
			seen.put("StartsWithABadArgument", redis);
		}

	}

	@WithRedis(kind = RedisKind.URL)
	static class NeedsUrl {

		@Test
		void never(TestRedis redis) {
			seen.put("NeedsUrl", redis);
		}

		@Test
		void neverEither() {
			throw new AssertionError("runs only with a Redis of kind URL");
		}

	}

	@WithRedis(kind = RedisKind.URL)
	static class NeedsUrlInConstructor {

		NeedsUrlInConstructor(TestRedis redis) {
			seen.put("NeedsUrlInConstructor", redis);
		}

		@Test
		void never() {
		}

	}

}

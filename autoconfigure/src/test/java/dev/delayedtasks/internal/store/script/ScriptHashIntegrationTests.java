package dev.delayedtasks.internal.store.script;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

import dev.delayedtasks.internal.store.StoreFixture;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis caches a script under the SHA-1 of the text {@link StoreScripts} sends, the file
 * with its includes inlined, so {@code EVALSHA} names that text and never the file's. A
 * private server, so no other build's scripts are in its cache.
 */
@WithRedis(privateServer = true)
class ScriptHashIntegrationTests {

	@Test
	void redisCachesEachScriptUnderTheSha1OfItsInlinedText(TestRedis redis) throws IOException {
		// EVALSHA in every mode: the cache is what is tested.
		try (StoreFixture fixture = new StoreFixture(redis,
				StoreFixture.settings(redis.keyPrefix(), StoreFixture.LEASE, StoreFixture.GRACE),
				StringRedisTemplate::new)) {
			fixture.scheduler.enqueue("hashes", "payload");

			String inlined = sha1(StoreScripts.source(Script.ENQUEUE));
			String file = sha1(new ClassPathResource(Script.ENQUEUE.fileName(), StoreScripts.class)
				.getContentAsString(StandardCharsets.UTF_8));
			List<Boolean> cached = fixture.redis
				.execute((RedisCallback<List<Boolean>>) (connection) -> connection.scriptingCommands()
					.scriptExists(inlined, file));
			assertThat(inlined).isNotEqualTo(file);
			assertThat(cached).containsExactly(true, false);
		}
	}

	private static String sha1(String text) {
		try {
			return HexFormat.of()
				.formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}

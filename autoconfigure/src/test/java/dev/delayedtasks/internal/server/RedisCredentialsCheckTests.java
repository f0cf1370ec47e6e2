package dev.delayedtasks.internal.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which combinations of {@code spring.data.redis.url} and
 * {@code spring.data.redis.username} make the startup warn that the URL's user wins.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisCredentialsCheckTests {

	private static final String WARNING = "spring.data.redis.username is 'app'";

	@Test
	void aUrlWithoutCredentialsConnectsAsTheDefaultUser(CapturedOutput output) {
		check("redis://localhost:6379", "app");
		assertThat(output).contains(WARNING).contains("connects to Redis as the default user");
	}

	@Test
	void aUrlWithAPasswordOnlyConnectsAsTheDefaultUser(CapturedOutput output) {
		check("redis://:secret@localhost:6379", "app");
		assertThat(output).contains(WARNING).contains("the default user").doesNotContain("secret");
	}

	@Test
	void aUrlWithAnotherUserConnectsAsThatUser(CapturedOutput output) {
		check("rediss://other:secret@localhost:6379", "app");
		assertThat(output).contains(WARNING).contains("as 'other'").doesNotContain("secret");
	}

	@Test
	void aUrlWithTheConfiguredUserIsFine(CapturedOutput output) {
		check("redis://app:secret@localhost:6379", "app");
		assertThat(output).doesNotContain("spring.data.redis.username");
	}

	@Test
	void eitherPropertyAloneIsFine(CapturedOutput output) {
		check(null, "app");
		check("redis://localhost:6379", null);
		assertThat(output).doesNotContain("spring.data.redis.username");
	}

	private static void check(String url, String username) {
		MockEnvironment environment = new MockEnvironment();
		if (url != null) {
			environment.setProperty("spring.data.redis.url", url);
		}
		if (username != null) {
			environment.setProperty("spring.data.redis.username", username);
		}
		new RedisCredentialsCheck(environment).verify();
	}

}

package dev.delayedtasks.test;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class RedisServerExtensionTests {

	@Test
	void aClassThatNeedsAProcessOfItsOwnNeverGetsAContainerOrTheSharedUrl() {
		for (RedisKind forced : new RedisKind[] { RedisKind.URL, RedisKind.DOCKER, RedisKind.ANY }) {
			assertThat(RedisServerExtension.resolveKind(RedisKind.ANY, forced, true)).isEqualTo(RedisKind.ANY);
		}
		assertThat(RedisServerExtension.resolveKind(RedisKind.ANY, RedisKind.BUNDLED_6_2, true))
			.isEqualTo(RedisKind.BUNDLED_6_2);
		assertThat(RedisServerExtension.resolveKind(RedisKind.ANY, RedisKind.VALKEY, true)).isEqualTo(RedisKind.VALKEY);
		assertThatIllegalStateException()
			.isThrownBy(() -> RedisServerExtension.resolveKind(RedisKind.DOCKER, null, true))
			.withMessageContaining("redis-server processes of the class's own");
	}

	@Test
	void aSharedClassGetsTheForcedKindUnlessItAskedForOne() {
		assertThat(RedisServerExtension.resolveKind(RedisKind.ANY, RedisKind.DOCKER, false))
			.isEqualTo(RedisKind.DOCKER);
		assertThat(RedisServerExtension.resolveKind(RedisKind.BUNDLED_6_2, RedisKind.URL, false))
			.isEqualTo(RedisKind.BUNDLED_6_2);
		assertThat(RedisServerExtension.resolveKind(RedisKind.ANY, null, false)).isEqualTo(RedisKind.ANY);
	}

	@Test
	void aSkipSaysInOneLineWhatIsMissing() {
		assertThat(RedisServerExtension.skipReason(RedisKind.PATH_BINARY,
				new RedisUnavailableException("No redis-server on PATH\nsecond line")))
			.isEqualTo("Skipped, no Redis of kind PATH_BINARY here: No redis-server on PATH");
	}

}

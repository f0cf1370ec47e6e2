package dev.delayedtasks.test;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RedisKindTests {

	@Test
	void parsesTheNamesCiUses() {
		assertThat(RedisKind.parse("bundled-6.2")).isEqualTo(RedisKind.BUNDLED_6_2);
		assertThat(RedisKind.parse("PATH")).isEqualTo(RedisKind.PATH_BINARY);
		assertThat(RedisKind.parse("docker")).isEqualTo(RedisKind.DOCKER);
		assertThat(RedisKind.parse("url")).isEqualTo(RedisKind.URL);
		assertThat(RedisKind.parse("Valkey")).isEqualTo(RedisKind.VALKEY);
		assertThat(RedisKind.parse(" ")).isNull();
		assertThat(RedisKind.parse(null)).isNull();
	}

	@Test
	void rejectsUnknownNamesWithTheChoices() {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisKind.parse("keydb"))
			.withMessageContaining("'keydb'")
			.withMessageContaining("bundled-6.2")
			.withMessageContaining("valkey");
	}

}

package dev.delayedtasks.internal.testing;

import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class TestRedisConnectionDetailsTests {

	@Test
	void aPlainServerHasHostPortAndNoCredentials() {
		TestRedisConnectionDetails details = new TestRedisConnectionDetails(RedisURI.create("redis://127.0.0.1:7001"));
		assertThat(details.getStandalone().getHost()).isEqualTo("127.0.0.1");
		assertThat(details.getStandalone().getPort()).isEqualTo(7001);
		assertThat(details.getStandalone().getDatabase()).isZero();
		assertThat(details.getUsername()).isNull();
		assertThat(details.getPassword()).isNull();
	}

	@Test
	void aUrlCarriesItsDatabaseAndCredentials() {
		TestRedisConnectionDetails details = new TestRedisConnectionDetails(
				RedisURI.create("redis://ci:s3cret@redis.example:6380/4"));
		assertThat(details.getStandalone().getHost()).isEqualTo("redis.example");
		assertThat(details.getStandalone().getPort()).isEqualTo(6380);
		assertThat(details.getStandalone().getDatabase()).isEqualTo(4);
		assertThat(details.getUsername()).isEqualTo("ci");
		assertThat(details.getPassword()).isEqualTo("s3cret");
	}

	@Test
	void aPasswordWithoutAUserName() {
		TestRedisConnectionDetails details = new TestRedisConnectionDetails(
				RedisURI.create("redis://:s3cret@redis.example:6380"));
		assertThat(details.getUsername()).isNull();
		assertThat(details.getPassword()).isEqualTo("s3cret");
	}

	@Test
	void tlsIsRefusedWithWhatToDoInstead() {
		assertThatIllegalStateException()
			.isThrownBy(() -> new TestRedisConnectionDetails(RedisURI.create("rediss://redis.example:6380")))
			.withMessageContaining("provideRedis = false");
	}

}

package dev.delayedtasks.test;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedisProcessTests {

	@Test
	void aServerThatRefusesTheTlsDirectivesWasBuiltWithoutTls() {
		assertThat(RedisProcess.withoutTls(
				List.of("*** FATAL CONFIG FILE ERROR (Redis 6.2.6) ***", "Reading the configuration file, at line 2",
						">>> 'tls-port \"40123\"'", "Bad directive or wrong number of arguments")))
			.isTrue();
	}

	@Test
	void aServerThatRefusesAnotherDirectiveIsNotMissingTls() {
		assertThat(RedisProcess.withoutTls(
				List.of("*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***", "Reading the configuration file, at line 2",
						">>> 'no-such-directive \"yes\"'", "Bad directive or wrong number of arguments")))
			.isFalse();
		assertThat(RedisProcess.withoutTls(List.of("# Failed to load certificate: /tmp/redis.crt"))).isFalse();
	}

}

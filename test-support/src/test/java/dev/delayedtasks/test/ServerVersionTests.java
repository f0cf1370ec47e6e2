package dev.delayedtasks.test;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ServerVersionTests {

	@Test
	void valkeyIsKnownByItsServerNameAndItsOwnVersion() {
		String info = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n"
				+ "redis_git_sha1:00000000\r\nserver_mode:standalone\r\n";
		ServerVersion version = ServerVersion.parse(info);
		assertThat(version).isEqualTo(new ServerVersion("valkey", "8.0.1", "7.2.4"));
		assertThat(version.label()).isEqualTo("valkey-8.0.1");
	}

	@Test
	void aServerWithoutAServerNameIsRedis() {
		ServerVersion version = ServerVersion.parse("# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n");
		assertThat(version).isEqualTo(ServerVersion.redis("7.0.15"));
		assertThat(version.label()).isEqualTo("redis-7.0.15");
	}

}

package dev.delayedtasks.deploy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.cert.CertPathBuilderException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.autoconfigure.DelayedTasksAutoConfiguration;
import dev.delayedtasks.internal.worker.BlockingConnections;
import dev.delayedtasks.internal.worker.BlockingConnections.BlockingConnection;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.types.RedisClientInfo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The starter on a Redis that listens on a TLS port only (no plain port, so every
 * connection that works spoke TLS), configured the way docs/deployment.md shows: an SSL
 * bundle trusting the test CA and {@code spring.data.redis.ssl.*}. The server also
 * listens on 127.0.0.2 where the host has it, an address its certificate does not name.
 */
@WithRedis(tls = true, arguments = { "--bind", "127.0.0.1", "-127.0.0.2" })
@ExtendWith(OutputCaptureExtension.class)
class TlsIntegrationTests {

	private static final String QUEUE = "tls";

	private final TestRedis redis;

	private final ApplicationContextRunner runner;

	TlsIntegrationTests(TestRedis redis) {
		this.redis = redis;
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, DataRedisAutoConfiguration.class,
					JacksonAutoConfiguration.class, DelayedTasksAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port(),
					"delayed-tasks.key-prefix=" + redis.keyPrefix(), "delayed-tasks.worker.lease-duration=2s",
					"delayed-tasks.worker.reap-grace=500ms", "delayed-tasks.worker.timer-ttl=1s");
	}

	private ApplicationContextRunner trustingTheCa() {
		return this.runner.withPropertyValues("spring.data.redis.ssl.enabled=true",
				"spring.data.redis.ssl.bundle=redis",
				"spring.ssl.bundle.pem.redis.truststore.certificate=file:" + this.redis.caCertificate());
	}

	@Test
	void aDelayedTaskIsScheduledAndRunOverTlsAndIdleDispatchersBlockOverTls() {
		trustingTheCa().withUserConfiguration(Handlers.class).run((context) -> {
			assertThat(context).hasNotFailed();
			Handlers handlers = context.getBean(Handlers.class);
			TaskId id = context.getBean(DelayedTaskScheduler.class).schedule(QUEUE, "over TLS", Duration.ofMillis(300));
			await().atMost(Duration.ofSeconds(10)).until(() -> handlers.done.contains(id));
			// The server has no plain port: a client blocked in BLPOP is a dispatcher or
			// tick reader that connected over TLS.
			StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
			await().atMost(Duration.ofSeconds(5))
				.until(() -> clients(template).stream().anyMatch((client) -> "blpop".equals(client.getLastCommand())));
		});
	}

	@Test
	void blockingConnectionsFromTheApplicationsFactorySpeakTls() {
		trustingTheCa().withPropertyValues("delayed-tasks.worker.enabled=false").run((context) -> {
			String key = this.redis.keyPrefix() + ":{tls:0}:probe";
			BlockingConnections connections = new BlockingConnections(context.getBean(RedisConnectionFactory.class));
			try (BlockingConnection connection = connections.open(Duration.ofSeconds(1))) {
				context.getBean(StringRedisTemplate.class).opsForList().rightPush(key, "token");
				assertThat(connection.pop(Duration.ofSeconds(1), key)).isEqualTo("token");
			}
		});
	}

	@Test
	void anApplicationThatDoesNotTrustTheCaIsRefusedWithTheReason(CapturedOutput output) {
		this.runner.withPropertyValues("spring.data.redis.ssl.enabled=true", "delayed-tasks.worker.enabled=false")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Could not verify the delayed-tasks data layout, Redis did not answer: "
						+ "Unable to connect to Redis: unable to find valid certification path");
				assertThatExceptionOfType(TaskStoreException.class)
					.isThrownBy(() -> context.getBean(DelayedTaskScheduler.class).enqueue(QUEUE, "refused"))
					.withMessageContaining("unable to find valid certification path")
					.withRootCauseInstanceOf(CertPathBuilderException.class);
			});
	}

	@Test
	void aServerWhoseCertificateDoesNotNameTheHostIsRefused() throws Exception {
		assumeTrue(listens("127.0.0.2"), "this host has no loopback address 127.0.0.2");
		trustingTheCa().withPropertyValues("spring.data.redis.host=127.0.0.2", "delayed-tasks.worker.enabled=false")
			.run((context) -> assertThatExceptionOfType(TaskStoreException.class)
				.isThrownBy(() -> context.getBean(DelayedTaskScheduler.class).enqueue(QUEUE, "wrong host"))
				.withStackTraceContaining("No subject alternative names matching IP address 127.0.0.2"));
	}

	private boolean listens(String address) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(InetAddress.getByName(address), this.redis.port()), 500);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static List<RedisClientInfo> clients(StringRedisTemplate template) {
		return template.execute(
				(RedisCallback<List<RedisClientInfo>>) (connection) -> connection.serverCommands().getClientList());
	}

	@Configuration(proxyBeanMethods = false)
	static class Handlers {

		final Set<TaskId> done = ConcurrentHashMap.newKeySet();

		@DelayedTaskHandler(queue = QUEUE)
		void run(String text, TaskContext context) {
			this.done.add(context.id());
		}

	}

}

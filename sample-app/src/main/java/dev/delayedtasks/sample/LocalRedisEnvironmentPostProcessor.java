package dev.delayedtasks.sample;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.test.RedisKind;
import dev.delayedtasks.test.RedisServer;
import dev.delayedtasks.test.RedisServers;
import org.apache.commons.logging.Log;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Makes the sample start with one command anywhere: when no Redis answers at the
 * configured {@code spring.data.redis.*} address, it starts a local {@code redis-server}
 * the way the tests do and points the application at it. Only the sample does this; the
 * starter never starts servers.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
class LocalRedisEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	private static final int PROBE_TIMEOUT_MILLIS = 1000;

	private final Log logger;

	LocalRedisEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(LocalRedisEnvironmentPostProcessor.class);
	}

	@Override
	public int getOrder() {
		// After the config data post-processor, so that application.yml and profiles have
		// been read.
		return Ordered.LOWEST_PRECEDENCE;
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (environment.containsProperty("spring.data.redis.sentinel.master")
				|| environment.containsProperty("spring.data.redis.cluster.nodes[0]")
				|| environment.containsProperty("spring.data.redis.cluster.nodes")) {
			this.logger.info("Redis: using the configured Sentinel or Cluster deployment");
			return;
		}
		String url = environment.getProperty("spring.data.redis.url");
		if ((url != null && url.startsWith("rediss:"))
				|| environment.getProperty("spring.data.redis.ssl.enabled", Boolean.class, false)) {
			this.logger.info("Redis: using the configured TLS server");
			return;
		}
		String host = (url != null) ? URI.create(url).getHost()
				: environment.getProperty("spring.data.redis.host", "localhost");
		int port = (url != null) ? portOf(url) : environment.getProperty("spring.data.redis.port", Integer.class, 6379);
		if (answers(host, port)) {
			this.logger.info("Redis: using the configured server at " + host + ":" + port);
			return;
		}
		RedisServer server = RedisServers.fromEnvironment().startPrivate(RedisKind.ANY, List.of());
		this.logger.warn("Redis: nothing answered at " + host + ":" + port + ", so the sample started "
				+ server.describe() + "; it stops with the application. Set spring.data.redis.url to use another.");
		environment.getPropertySources()
			.addFirst(new MapPropertySource("sampleLocalRedis",
					Map.of("spring.data.redis.url", server.url(), "spring.data.redis.host", server.uri().getHost(),
							"spring.data.redis.port", server.uri().getPort())));
		// Destroyed last (registered first), after the delayed-tasks workers have stopped
		// and released their tasks.
		application.addInitializers((context) -> ((DefaultListableBeanFactory) context.getBeanFactory())
			.registerDisposableBean("sampleLocalRedis", server::close));
	}

	private static int portOf(String url) {
		int port = URI.create(url).getPort();
		return (port != -1) ? port : 6379;
	}

	/**
	 * Whether a Redis answers at the address: any RESP reply counts, {@code -NOAUTH}
	 * included.
	 * @param host the host
	 * @param port the port
	 * @return whether a Redis answered
	 */
	private static boolean answers(String host, int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), PROBE_TIMEOUT_MILLIS);
			socket.setSoTimeout(PROBE_TIMEOUT_MILLIS);
			OutputStream out = socket.getOutputStream();
			out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			int first = in.read();
			return first == '+' || first == '-';
		}
		catch (IOException ex) {
			return false;
		}
	}

}

package dev.delayedtasks.benchmarks;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.delayedtasks.test.PidFiles;
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
import org.springframework.util.StringUtils;

/**
 * Points the benchmarks at their Redis before any bean exists: the server given by
 * {@code --redis-url}, or else a private {@code redis-server} started the way the tests
 * start one and stopped when the application ends. Also gives the run a key prefix of its
 * own ({@code bench-<random>}) unless {@code delayed-tasks.key-prefix} is set. A private
 * server is also registered as a {@link RedisServer} bean.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
class BenchmarkRedisEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	static final String REDIS_URL = "redis-url";

	static final String REDIS_ORIGIN = "bench.redis-origin";

	private final Log logger;

	BenchmarkRedisEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(BenchmarkRedisEnvironmentPostProcessor.class);
	}

	@Override
	public int getOrder() {
		// After the config data post-processor, so that application.yml has been read.
		return Ordered.LOWEST_PRECEDENCE;
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		Map<String, Object> properties = new HashMap<>();
		if (!environment.containsProperty("delayed-tasks.key-prefix")) {
			properties.put("delayed-tasks.key-prefix", "bench-" + UUID.randomUUID().toString().substring(0, 8));
		}
		String url = environment.getProperty(REDIS_URL);
		if (StringUtils.hasText(url)) {
			properties.put("spring.data.redis.url", url);
			properties.put(REDIS_ORIGIN, "given");
		}
		else {
			RedisServer server = startPrivateRedis();
			this.logger.info("No --redis-url given: started " + server.describe() + " for this run");
			properties.put("spring.data.redis.url", server.url());
			properties.put(REDIS_ORIGIN, "private");
			// Registered first, so destroyed last: after the handlers have stopped.
			// Also a bean, for the soak, which stops the process for a while.
			application.addInitializers((context) -> {
				DefaultListableBeanFactory beanFactory = (DefaultListableBeanFactory) context.getBeanFactory();
				beanFactory.registerDisposableBean("benchmarkRedis", server::close);
				beanFactory.registerSingleton("benchmarkRedisServer", server);
			});
		}
		environment.getPropertySources().addFirst(new MapPropertySource("benchmarkRedis", properties));
	}

	private static RedisServer startPrivateRedis() {
		PidFiles pidFiles = new PidFiles(BuildDirectory.target().resolve("redis-servers"));
		pidFiles.reapOrphans();
		return new RedisServers(System.getenv(), pidFiles).startPrivate(RedisKind.ANY, List.of());
	}

}

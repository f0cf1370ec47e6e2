package dev.delayedtasks.store;

import java.time.Duration;
import java.util.Map;
import java.util.function.Function;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.autoconfigure.DelayedTasksProperties;
import dev.delayedtasks.test.TestRedis;
import io.micrometer.observation.ObservationRegistry;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.unit.DataSize;

/**
 * The store's objects wired to a test Redis under the test class's key prefix, with the
 * short test lease.
 */
final class StoreFixture implements AutoCloseable {

	static final Duration LEASE = Duration.ofSeconds(2);

	static final Duration GRACE = Duration.ofMillis(500);

	final LettuceConnectionFactory connectionFactory;

	final StringRedisTemplate redis;

	final StoreSettings settings;

	final StoreScripts scripts;

	final PayloadCodec codec;

	final QueueIndex queues;

	final RedisTaskStore store;

	final RedisDelayedTaskScheduler scheduler;

	final RedisDeadLetters deadLetters;

	StoreFixture(TestRedis testRedis) {
		this(testRedis, settings(testRedis.keyPrefix(), LEASE, GRACE));
	}

	StoreFixture(TestRedis testRedis, StoreSettings settings) {
		this(testRedis, settings, StringRedisTemplate::new);
	}

	/**
	 * The store's objects on a template of the test's making, for example one that
	 * records the script calls.
	 */
	StoreFixture(TestRedis testRedis, StoreSettings settings,
			Function<RedisConnectionFactory, StringRedisTemplate> templates) {
		this.connectionFactory = new LettuceConnectionFactory(
				LettuceConnectionFactory.createRedisConfiguration(testRedis.uri()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.redis = templates.apply(this.connectionFactory);
		this.settings = settings;
		this.scripts = new StoreScripts(this.redis);
		this.codec = new PayloadCodec(JsonMapper.shared(), DataSize.ofKilobytes(64));
		this.queues = new QueueIndex(this.redis, settings.keyPrefix());
		this.store = new RedisTaskStore(this.scripts, settings);
		this.scheduler = new RedisDelayedTaskScheduler(this.scripts, settings, this.codec, this.queues, (queue) -> 4,
				500, new DelayedTaskListener() {
				}, ObservationRegistry.NOOP, null);
		this.deadLetters = new RedisDeadLetters(this.scripts, settings);
	}

	/**
	 * Settings with the given key prefix and lease and every other value as the
	 * application's defaults: the defaults of {@link DelayedTasksProperties}, bound from
	 * an empty configuration.
	 */
	static StoreSettings settings(String keyPrefix, Duration leaseDuration, Duration reapGrace) {
		DelayedTasksProperties defaults = new Binder(new MapConfigurationPropertySource()).bindOrCreate("delayed-tasks",
				DelayedTasksProperties.class);
		return StoreSettings.of(keyPrefix, leaseDuration, reapGrace, defaults.worker().maxDeliveries(),
				defaults.deadLetter().retention(), defaults.deadLetter().maxCount());
	}

	PartitionKeys keys(String queue) {
		return this.settings.keys(queue);
	}

	Map<Object, Object> hash(String queue, String id) {
		return this.redis.opsForHash().entries(keys(queue).task(id));
	}

	@Override
	public void close() {
		this.connectionFactory.destroy();
	}

}

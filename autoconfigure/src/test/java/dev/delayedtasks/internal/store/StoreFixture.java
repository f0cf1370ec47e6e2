package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.Map;
import java.util.function.Function;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.autoconfigure.DelayedTasksProperties;
import dev.delayedtasks.internal.admin.RedisDeadLetters;
import dev.delayedtasks.internal.admin.RedisQueueControl;
import dev.delayedtasks.internal.producer.RedisDelayedTaskScheduler;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.FunctionLibraries;
import dev.delayedtasks.internal.store.script.FunctionLibrary;
import dev.delayedtasks.internal.store.script.FunctionScriptCall;
import dev.delayedtasks.internal.store.script.RedisMasters;
import dev.delayedtasks.internal.store.script.StoreScripts;
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
public final class StoreFixture implements AutoCloseable {

	public static final Duration LEASE = Duration.ofSeconds(2);

	public static final Duration GRACE = Duration.ofMillis(500);

	public final LettuceConnectionFactory connectionFactory;

	public final StringRedisTemplate redis;

	public final StoreSettings settings;

	public final StoreScripts scripts;

	public final PayloadCodec codec;

	public final QueueIndex queues;

	public final RedisTaskStore store;

	public final RedisDelayedTaskScheduler scheduler;

	public final RedisDeadLetters deadLetters;

	public final RedisQueueControl control;

	public StoreFixture(TestRedis testRedis) {
		this(testRedis, settings(testRedis.keyPrefix(), LEASE, GRACE));
	}

	public StoreFixture(TestRedis testRedis, StoreSettings settings) {
		this(testRedis, settings, StringRedisTemplate::new, true);
	}

	/**
	 * The store's objects on a template of the test's making, for example one that
	 * records the script calls.
	 */
	public StoreFixture(TestRedis testRedis, StoreSettings settings,
			Function<RedisConnectionFactory, StringRedisTemplate> templates) {
		// Such a test watches the script calls on its template: EVALSHA, whatever the
		// mode.
		this(testRedis, settings, templates, false);
	}

	private StoreFixture(TestRedis testRedis, StoreSettings settings,
			Function<RedisConnectionFactory, StringRedisTemplate> templates, boolean functionsWhenAsked) {
		this.connectionFactory = new LettuceConnectionFactory(
				LettuceConnectionFactory.createRedisConfiguration(testRedis.uri()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.redis = templates.apply(this.connectionFactory);
		this.settings = settings;
		this.scripts = (functionsWhenAsked && !testRedis.version().startsWith("6.")) ? scripts(this.redis)
				: new StoreScripts(this.redis);
		this.codec = new PayloadCodec(JsonMapper.shared(), DataSize.ofKilobytes(64));
		this.queues = new QueueIndex(this.redis, settings.keyPrefix());
		this.store = new RedisTaskStore(this.scripts, settings);
		this.scheduler = new RedisDelayedTaskScheduler(this.scripts, settings, this.codec, this.queues, (queue) -> 4,
				500, new DelayedTaskListener() {
				}, ObservationRegistry.NOOP, null);
		this.deadLetters = new RedisDeadLetters(this.scripts, settings, this.codec);
		this.control = new RedisQueueControl(this.scripts, settings, this.queues, (queue) -> null);
	}

	/**
	 * The scripts as the tests run them: with {@code EVALSHA}/{@code EVAL}, or, when the
	 * system property {@code delayed-tasks.test.scripts.mode} is {@code functions} (Redis
	 * 7+), with {@code FCALL} of the function library, loaded on first use. Either way
	 * the store tests check the same behaviour. Redis 6.2 has no Functions: the classes
	 * pinned to it stay with {@code EVALSHA}.
	 * @param redis the template
	 * @return the scripts
	 */
	static StoreScripts scripts(StringRedisTemplate redis) {
		if (!"functions".equalsIgnoreCase(System.getProperty("delayed-tasks.test.scripts.mode"))) {
			return new StoreScripts(redis);
		}
		RedisMasters masters = new RedisMasters(redis, Duration.ofSeconds(10));
		FunctionLibraries libraries = new FunctionLibraries(masters, new FunctionLibrary(), true);
		return new StoreScripts(redis, new FunctionScriptCall(masters, libraries, true));
	}

	/**
	 * Settings with the given key prefix and lease and every other value as the
	 * application's defaults: the defaults of {@link DelayedTasksProperties}, bound from
	 * an empty configuration.
	 */
	public static StoreSettings settings(String keyPrefix, Duration leaseDuration, Duration reapGrace) {
		DelayedTasksProperties defaults = new Binder(new MapConfigurationPropertySource()).bindOrCreate("delayed-tasks",
				DelayedTasksProperties.class);
		return StoreSettings.of(keyPrefix, leaseDuration, reapGrace, defaults.worker().maxDeliveries(),
				defaults.deadLetter().retention(), defaults.deadLetter().maxCount(),
				defaults.deadLetter().keepExpired(), defaults.worker().timerTtl());
	}

	public PartitionKeys keys(String queue) {
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

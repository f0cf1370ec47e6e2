package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.RedisInstanceRegistry.HandlerRecord;
import dev.delayedtasks.internal.store.RedisInstanceRegistry.InstanceRecord;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The instance registry on a real Redis: reports read back by id; an entry that is not
 * reported again expires on Redis's clock and its id leaves the index; a graceful leave
 * at once; one unreadable report among good ones is left out, not the list; the keys
 * share one hash tag.
 */
@WithRedis
class RedisInstanceRegistryIntegrationTests {

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private RedisInstanceRegistry registry;

	private String index;

	private TestRedis testRedis;

	@BeforeEach
	void setUp(TestRedis testRedis) {
		this.testRedis = testRedis;
		this.connectionFactory = new LettuceConnectionFactory(
				LettuceConnectionFactory.createRedisConfiguration(testRedis.uri()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.registry = new RedisInstanceRegistry(this.redis, testRedis.keyPrefix());
		this.index = testRedis.keyPrefix() + ":{instances}";
	}

	@AfterEach
	void tearDown() {
		this.testRedis.deleteKeys();
		this.connectionFactory.destroy();
	}

	@Test
	void reportsAreReadBackByIdAndALeaveTakesOneOutAtOnce() {
		InstanceRecord b = instance("b-2", List.of(new HandlerRecord("emails", 8, 3, true, true)));
		InstanceRecord a = instance("a-1", List.of());
		this.registry.report(b, Duration.ofMinutes(1));
		this.registry.report(a, Duration.ofMinutes(1));
		RedisInstanceRegistry.Instances read = this.registry.alive();
		assertThat(read.instances()).containsExactly(a, b);
		assertThat(read.known()).isEqualTo(2);
		// A second report replaces the first.
		InstanceRecord busier = instance("b-2", List.of(new HandlerRecord("emails", 8, 8, true, false)));
		this.registry.report(busier, Duration.ofMinutes(1));
		assertThat(this.registry.alive().instances()).containsExactly(a, busier);
		this.registry.leave("b-2");
		assertThat(this.registry.alive().instances()).containsExactly(a);
		assertThat(this.redis.opsForZSet().score(this.index, "b-2")).isNull();
		assertThat(this.redis.hasKey(this.index + ":b-2")).isFalse();
	}

	@Test
	void anInstanceThatStopsReportingExpiresOnRedissClockAndLeavesTheIndex() {
		this.registry.report(instance("crashed", List.of()), Duration.ofMillis(500));
		this.registry.report(instance("alive", List.of()), Duration.ofMinutes(1));
		assertThat(this.registry.alive().instances()).extracting(InstanceRecord::id)
			.containsExactly("alive", "crashed");
		await().atMost(Duration.ofSeconds(5))
			.until(() -> this.registry.alive().instances().stream().map(InstanceRecord::id).toList(),
					(ids) -> ids.equals(List.of("alive")));
		assertThat(this.redis.opsForZSet().range(this.index, 0, -1)).containsExactly("alive");
		assertThat(this.registry.alive().known()).isEqualTo(1);
	}

	@Test
	void oneUnreadableReportIsLeftOutAndTheOthersAreListed() {
		this.registry.report(instance("good", List.of()), Duration.ofMinutes(1));
		this.redis.opsForValue().set(this.index + ":bad", "{not json", Duration.ofMinutes(1));
		this.redis.opsForZSet().add(this.index, "bad", System.currentTimeMillis());
		assertThat(this.registry.alive().instances()).extracting(InstanceRecord::id).containsExactly("good");
	}

	@Test
	void aRedisFailureIsATaskStoreExceptionThatNamesTheRegistry() {
		this.redis.opsForValue().set(this.index, "not a sorted set");
		assertThatExceptionOfType(TaskStoreException.class).isThrownBy(() -> this.registry.alive())
			.withMessageContaining("instance registry");
	}

	private static InstanceRecord instance(String id, List<HandlerRecord> handlers) {
		Instant now = Instant.parse("2026-11-28T10:15:30Z");
		return new InstanceRecord(id, "host-" + id, 4242, "app", now.minusSeconds(60), now, handlers);
	}

}

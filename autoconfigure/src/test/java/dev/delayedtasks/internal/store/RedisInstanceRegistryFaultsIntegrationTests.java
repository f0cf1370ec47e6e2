package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.delayedtasks.internal.store.RedisInstanceRegistry.InstanceRecord;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The instance registry against bad data and time: a report without an id, or without
 * handlers, hides nothing; a report of a newer version with a field this one does not
 * know is listed; crashed instances' ids leave the index with the next report, whether or
 * not anyone reads the list; many expired ids do not hide a live instance.
 */
@WithRedis
class RedisInstanceRegistryFaultsIntegrationTests {

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

	// One bad item among good ones: valid JSON but without an id.
	@Test
	void aReportWithoutAnIdDoesNotHideTheOthers() {
		this.registry.report(instance("good-1"), Duration.ofMinutes(1));
		this.registry.report(instance("good-2"), Duration.ofMinutes(1));
		this.redis.opsForValue().set(this.index + ":bad", "{\"host\":\"h\",\"pid\":1}", Duration.ofMinutes(1));
		this.redis.opsForZSet().add(this.index, "bad", System.currentTimeMillis());
		assertThat(this.registry.alive().instances()).extracting(InstanceRecord::id)
			.containsExactly("good-1", "good-2");
	}

	// One bad item: a report without handlers (null) must not reach the page as null
	// (dashboard.js reads instance.handlers.length for every row).
	@Test
	void aReportWithoutHandlersIsNotListedWithNullHandlers() {
		this.registry.report(instance("good"), Duration.ofMinutes(1));
		this.redis.opsForValue()
			.set(this.index + ":nohandlers", "{\"id\":\"nohandlers\",\"pid\":1}", Duration.ofMinutes(1));
		this.redis.opsForZSet().add(this.index, "nohandlers", System.currentTimeMillis());
		assertThat(this.registry.alive().instances()).allSatisfy((i) -> assertThat(i.handlers()).isNotNull());
	}

	// Rolling deploy: a newer version reports a field this version does not know.
	@Test
	void aReportFromANewerVersionWithAnExtraFieldIsListed() {
		this.registry.report(instance("old"), Duration.ofMinutes(1));
		String newer = "{\"id\":\"newer\",\"host\":\"h\",\"pid\":1,\"application\":\"app\","
				+ "\"startedAt\":\"2026-11-28T10:14:30Z\",\"reportedAt\":\"2026-11-28T10:15:30Z\",\"handlers\":[],"
				+ "\"version\":\"0.4.0\"}";
		this.redis.opsForValue().set(this.index + ":newer", newer, Duration.ofMinutes(1));
		this.redis.opsForZSet().add(this.index, "newer", System.currentTimeMillis());
		assertThat(this.registry.alive().instances()).extracting(InstanceRecord::id).containsExactly("newer", "old");
	}

	// Memory over time: instances that crash (no graceful leave) while nobody opens the
	// dashboard (or the dashboard is not installed at all): each report of a live
	// instance
	// sweeps up to 100 of the least recently reported ids whose entries expired.
	@Test
	void theIndexDoesNotGrowWithCrashedInstancesWhenNobodyReadsIt() throws InterruptedException {
		for (int i = 0; i < 200; i++) {
			this.registry.report(instance("crashed-" + i), Duration.ofMillis(200));
		}
		Thread.sleep(500);
		// A live instance keeps reporting, as the heartbeat does every 10 s.
		for (int i = 0; i < 3; i++) {
			this.registry.report(instance("live"), Duration.ofSeconds(30));
		}
		assertThat(this.redis.opsForZSet().zCard(this.index)).as("ids in the index").isLessThanOrEqualTo(10);
	}

	// Once the index has grown past MAX_READ expired ids, a live instance must still be
	// listed on the first read.
	@Test
	void manyExpiredIdsDoNotHideALiveInstanceOnTheFirstRead() throws InterruptedException {
		for (int i = 0; i < 2000; i++) {
			this.registry.report(instance("crashed-" + i), Duration.ofMillis(200));
		}
		this.registry.report(instance("live"), Duration.ofMinutes(1));
		Thread.sleep(500);
		RedisInstanceRegistry.Instances read = this.registry.alive();
		assertThat(read.instances()).extracting(InstanceRecord::id).containsExactly("live");
		assertThat(read.known()).isEqualTo(1);
	}

	private static InstanceRecord instance(String id) {
		Instant now = Instant.parse("2026-11-28T10:15:30Z");
		return new InstanceRecord(id, "host-" + id, 4242, "app", now.minusSeconds(60), now, List.of());
	}

}

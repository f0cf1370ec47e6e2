package dev.delayedtasks.internal.recurring;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.internal.worker.OccurrenceGate;
import dev.delayedtasks.test.TestRedis;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.unit.DataSize;

/**
 * Recurring schedules on a test Redis under the test's key prefix, as one instance of an
 * application sees them; a second fixture on the same prefix is a second instance.
 */
final class RecurringFixture implements AutoCloseable {

	final LettuceConnectionFactory connectionFactory;

	final StringRedisTemplate redis;

	final StoreSettings settings;

	final RedisRecurringTasks recurring;

	final Map<String, AtomicLong> created = new ConcurrentHashMap<>();

	final Map<String, AtomicLong> missed = new ConcurrentHashMap<>();

	final Map<String, AtomicLong> skipped = new ConcurrentHashMap<>();

	RecurringFixture(TestRedis testRedis) {
		this(testRedis, Clock.systemUTC());
	}

	/**
	 * An instance whose clock is the given one.
	 * @param testRedis the Redis
	 * @param clock the instance's clock, such as one set ahead of Redis's
	 */
	RecurringFixture(TestRedis testRedis, Clock clock) {
		this.connectionFactory = new LettuceConnectionFactory(
				LettuceConnectionFactory.createRedisConfiguration(testRedis.uri()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.settings = StoreSettings.of(testRedis.keyPrefix(), Duration.ofSeconds(2), Duration.ofMillis(500), 10,
				Duration.ofDays(14), 100_000);
		this.recurring = new RedisRecurringTasks(new StoreScripts(this.redis), this.settings,
				new PayloadCodec(JsonMapper.shared(), DataSize.ofKilobytes(64)),
				new QueueIndex(this.redis, this.settings.keyPrefix()), this.redis, (queue) -> 4, new RecurringEvents() {

					@Override
					public void created(String queue, String scheduleId, long count) {
						RecurringFixture.this.created.computeIfAbsent(scheduleId, (id) -> new AtomicLong())
							.addAndGet(count);
					}

					@Override
					public void missed(String queue, String scheduleId, long count) {
						RecurringFixture.this.missed.computeIfAbsent(scheduleId, (id) -> new AtomicLong())
							.addAndGet(count);
					}

					@Override
					public void skipped(String queue, String scheduleId, String reason) {
						RecurringFixture.this.skipped.computeIfAbsent(reason, (id) -> new AtomicLong())
							.incrementAndGet();
					}

				}, clock);
	}

	PartitionKeys keys(String queue) {
		return this.settings.keys(queue);
	}

	/** Occurrence tasks of a schedule in Redis: tick to state. */
	TreeMap<Long, String> occurrences(String queue, String scheduleId) {
		TreeMap<Long, String> found = new TreeMap<>();
		String prefix = keys(queue).task(scheduleId + ":");
		for (String key : this.redis.keys(prefix + "*")) {
			found.put(Long.parseLong(key.substring(prefix.length())), (String) this.redis.opsForHash().get(key, "s"));
		}
		return found;
	}

	/**
	 * Cancel a task with the producer's script, as {@code DelayedTaskScheduler.cancel}
	 * does.
	 */
	boolean cancel(String queue, String id) {
		PartitionKeys keys = keys(queue);
		List<Object> reply = new StoreScripts(this.redis).run(Script.CANCEL,
				List.of(keys.sched(), keys.stats(), keys.task(id), keys.payload(id), keys.error(id)),
				List.of(keys.base(), id, "60000"), queue, null);
		return "C".equals(reply.get(1));
	}

	Map<Object, Object> schedule(String queue, String scheduleId) {
		return this.redis.opsForHash().entries(keys(queue).schedule(scheduleId));
	}

	/** The context a worker hands the gate for an occurrence's first delivery. */
	static TaskContext occurrence(String queue, String scheduleId, long tick) {
		Instant due = Instant.ofEpochMilli(tick);
		return new TaskContext(TaskId.of(scheduleId + ":" + tick), queue, 1, 1, due, due, Instant.now(),
				Map.of(OccurrenceGate.HEADER, scheduleId), "token");
	}

	long missed(String scheduleId) {
		AtomicLong count = this.missed.get(scheduleId);
		return (count != null) ? count.get() : 0;
	}

	long created(String scheduleId) {
		AtomicLong count = this.created.get(scheduleId);
		return (count != null) ? count.get() : 0;
	}

	@Override
	public void close() {
		this.connectionFactory.destroy();
	}

}

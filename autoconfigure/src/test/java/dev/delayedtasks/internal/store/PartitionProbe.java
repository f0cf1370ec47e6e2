package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

import static org.awaitility.Awaitility.await;

/**
 * Reads the raw Redis state of one queue partition for assertions: index membership with
 * scores, task hashes, counters, Redis time, and a snapshot of every key to prove that an
 * operation changed nothing.
 */
public final class PartitionProbe {

	private final StringRedisTemplate redis;

	public final PartitionKeys keys;

	public PartitionProbe(StoreFixture fixture, String queue) {
		this.redis = fixture.redis;
		this.keys = fixture.keys(queue);
	}

	/** Redis {@code TIME} in epoch milliseconds. */
	public long now() {
		Long now = this.redis
			.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time(TimeUnit.MILLISECONDS));
		return (now != null) ? now : -1;
	}

	/** Wait until Redis time has reached {@code epochMillis}. */
	void awaitNow(long epochMillis) {
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5)).until(() -> now() >= epochMillis);
	}

	/**
	 * Wait until Redis time is past {@code epochMillis}, so the next script sees a later
	 * ms.
	 */
	public void awaitAfter(long epochMillis) {
		awaitNow(epochMillis + 1);
	}

	public List<String> ready() {
		List<String> ids = this.redis.opsForList().range(this.keys.ready(), 0, -1);
		return (ids != null) ? ids : List.of();
	}

	public Map<String, Long> sched() {
		return zset(this.keys.sched());
	}

	Map<String, Long> lease() {
		return zset(this.keys.lease());
	}

	public Map<String, Long> dead() {
		return zset(this.keys.dead());
	}

	private Map<String, Long> zset(String key) {
		Set<TypedTuple<String>> tuples = this.redis.opsForZSet().rangeWithScores(key, 0, -1);
		Map<String, Long> members = new LinkedHashMap<>();
		if (tuples != null) {
			tuples.forEach((tuple) -> members.put(tuple.getValue(), tuple.getScore().longValue()));
		}
		return members;
	}

	/** The task hash, empty when there is none. */
	public Map<String, String> task(String id) {
		Map<String, String> fields = new TreeMap<>();
		this.redis.opsForHash().entries(this.keys.task(id)).forEach((k, v) -> fields.put(k.toString(), v.toString()));
		return fields;
	}

	public String payload(String id) {
		return this.redis.opsForValue().get(this.keys.payload(id));
	}

	public String error(String id) {
		return this.redis.opsForValue().get(this.keys.error(id));
	}

	boolean exists(String key) {
		return Boolean.TRUE.equals(this.redis.hasKey(key));
	}

	long pttl(String key) {
		Long ttl = this.redis.getExpire(key, TimeUnit.MILLISECONDS);
		return (ttl != null) ? ttl : -2;
	}

	public String type(String key) {
		return this.redis.type(key).code();
	}

	/** A counter of the partition's stats hash, 0 when never counted. */
	public long stat(String name) {
		Object value = this.redis.opsForHash().get(this.keys.stats(), name);
		return (value != null) ? Long.parseLong(value.toString()) : 0;
	}

	Map<String, String> stats() {
		Map<String, String> stats = new TreeMap<>();
		this.redis.opsForHash().entries(this.keys.stats()).forEach((k, v) -> stats.put(k.toString(), v.toString()));
		return stats;
	}

	long wakeTokens() {
		Long size = this.redis.opsForList().size(this.keys.wake());
		return (size != null) ? size : 0;
	}

	long tickTokens() {
		Long size = this.redis.opsForList().size(this.keys.tick());
		return (size != null) ? size : 0;
	}

	void clearSignals() {
		this.redis.delete(List.of(this.keys.wake(), this.keys.tick()));
	}

	/** Every key of the partition. */
	public Set<String> allKeys() {
		Set<String> all = new TreeSet<>();
		try (Cursor<String> cursor = this.redis
			.scan(ScanOptions.scanOptions().match(this.keys.base() + "*").count(1000).build())) {
			cursor.forEachRemaining(all::add);
		}
		return all;
	}

	/** The keys that belong to one task: its hash, payload and error record. */
	public Set<String> taskKeys(String id) {
		Set<String> present = new TreeSet<>();
		for (String key : List.of(this.keys.task(id), this.keys.payload(id), this.keys.error(id))) {
			if (exists(key)) {
				present.add(key);
			}
		}
		return present;
	}

	/**
	 * Every key of the partition with its type, content and whether it expires; the stats
	 * counters named in {@code ignoredCounters} are left out.
	 */
	public SortedMap<String, String> snapshot(String... ignoredCounters) {
		SortedMap<String, String> snapshot = new TreeMap<>();
		for (String key : allKeys()) {
			String type = type(key);
			String content = switch (type) {
				case "string" -> this.redis.opsForValue().get(key);
				case "list" -> String.valueOf(this.redis.opsForList().range(key, 0, -1));
				case "set" -> String.valueOf(new TreeSet<>(this.redis.opsForSet().members(key)));
				case "zset" -> String.valueOf(zset(key));
				case "hash" -> {
					Map<String, String> fields = new TreeMap<>();
					this.redis.opsForHash().entries(key).forEach((k, v) -> fields.put(k.toString(), v.toString()));
					if (key.equals(this.keys.stats())) {
						for (String ignored : ignoredCounters) {
							fields.remove(ignored);
						}
					}
					yield fields.toString();
				}
				default -> "?";
			};
			snapshot.put(key, type + " " + content + ((pttl(key) > 0) ? " (expires)" : ""));
		}
		return snapshot;
	}

	public List<String> violations() {
		return new ArrayList<>(StoreInvariants.violations(this.redis, this.keys));
	}

}

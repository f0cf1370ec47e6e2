package dev.delayedtasks.internal.admin;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import dev.delayedtasks.TaskStoreException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The instances that run workers, as each reports itself: an entry per instance that
 * expires on Redis's clock unless the instance reports again, so an instance that crashed
 * leaves the list within the entry's time to live and one that stops gracefully leaves at
 * once. Keys share one hash tag, so one {@code MGET} reads every entry on a Redis Cluster
 * too: {@code <prefix>:{instances}} (SET of ids) and {@code <prefix>:{instances}:<id>}
 * (STRING, JSON, with a time to live).
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public class RedisInstanceRegistry {

	/**
	 * The most instances read at once.
	 */
	public static final int MAX_READ = 500;

	private static final Log logger = LogFactory.getLog(RedisInstanceRegistry.class);

	private final StringRedisTemplate redis;

	private final JsonMapper mapper;

	private final String index;

	/**
	 * Create the registry.
	 * @param redis the template
	 * @param keyPrefix the prefix of every key
	 */
	public RedisInstanceRegistry(StringRedisTemplate redis, String keyPrefix) {
		this.redis = redis;
		this.mapper = JsonMapper.builder().build();
		this.index = keyPrefix + ":{instances}";
	}

	/**
	 * Report an instance: its entry lives for {@code ttl} unless reported again.
	 * @param instance the instance as it is now
	 * @param ttl how long the entry lives without another report
	 */
	public void report(InstanceRecord instance, Duration ttl) {
		String json = this.mapper.writeValueAsString(instance);
		call(() -> {
			// The entry first: an id in the index without its entry is read as gone.
			this.redis.opsForValue().set(entry(instance.id()), json, ttl);
			this.redis.opsForSet().add(this.index, instance.id());
			return null;
		});
	}

	/**
	 * Take an instance out at once, as a graceful stop does.
	 * @param id the instance's id
	 */
	public void leave(String id) {
		call(() -> {
			this.redis.opsForSet().remove(this.index, id);
			this.redis.delete(entry(id));
			return null;
		});
	}

	/**
	 * The instances whose entries live, by id; at most {@link #MAX_READ} of them. Ids
	 * whose entry expired (their instance stopped reporting) leave the index.
	 * @return the instances
	 */
	public Instances alive() {
		return call(() -> {
			Long total = this.redis.opsForSet().size(this.index);
			// SSCAN may return a member twice.
			Set<String> scanned = new LinkedHashSet<>();
			try (Cursor<String> cursor = this.redis.opsForSet()
				.scan(this.index, ScanOptions.scanOptions().count(MAX_READ).build())) {
				while (cursor.hasNext() && scanned.size() < MAX_READ) {
					scanned.add(cursor.next());
				}
			}
			List<String> ids = new ArrayList<>(scanned);
			if (ids.isEmpty()) {
				return new Instances(List.of(), 0);
			}
			List<String> values = this.redis.opsForValue().multiGet(ids.stream().map(this::entry).toList());
			List<InstanceRecord> alive = new ArrayList<>();
			List<String> gone = new ArrayList<>();
			for (int i = 0; i < ids.size(); i++) {
				String value = (values != null) ? values.get(i) : null;
				if (value == null) {
					gone.add(ids.get(i));
					continue;
				}
				InstanceRecord instance = read(ids.get(i), value);
				if (instance != null) {
					alive.add(instance);
				}
			}
			if (!gone.isEmpty()) {
				// An instance that reports again between the read and this removal
				// comes back with its next report.
				this.redis.opsForSet().remove(this.index, gone.toArray());
			}
			alive.sort(Comparator.comparing(InstanceRecord::id));
			long known = (total != null) ? total - gone.size() : alive.size();
			return new Instances(alive, Math.max(known, alive.size()));
		});
	}

	private @Nullable InstanceRecord read(String id, String value) {
		try {
			return this.mapper.readValue(value, InstanceRecord.class);
		}
		catch (JacksonException ex) {
			logger
				.warn("The report of instance '" + id + "' cannot be read; it is left out: " + ex.getOriginalMessage());
			return null;
		}
	}

	private String entry(String id) {
		return this.index + ":" + id;
	}

	private <T> T call(RedisCall<T> call) {
		try {
			return call.run();
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException("Redis failed to read or write the instance registry: " + ex.getMessage(),
					null, ex);
		}
	}

	@FunctionalInterface
	private interface RedisCall<T> {

		T run();

	}

	/**
	 * The instances read.
	 *
	 * @param instances the live instances read, by id
	 * @param known how many live instances the index names (more than those read when
	 * there are more than {@link #MAX_READ})
	 */
	public record Instances(List<InstanceRecord> instances, long known) {

	}

	/**
	 * An instance as it reports itself.
	 *
	 * @param id the instance's id, the one that names it as a queue's timer owner
	 * @param host its host name
	 * @param pid its process id
	 * @param application its {@code spring.application.name}, or empty
	 * @param startedAt when its workers started
	 * @param reportedAt when it reported this, by its own clock
	 * @param handlers its handlers
	 */
	public record InstanceRecord(String id, String host, long pid, String application, Instant startedAt,
			Instant reportedAt, List<HandlerRecord> handlers) {

	}

	/**
	 * One handler of an instance.
	 *
	 * @param queue the queue it serves
	 * @param concurrency how many tasks it may run at once
	 * @param activeTasks how many it runs now
	 * @param running whether it is running (not stopped or paused by a stop)
	 * @param timerOwner whether this instance owns the queue's timer
	 */
	public record HandlerRecord(String queue, int concurrency, int activeTasks, boolean running, boolean timerOwner) {

	}

}

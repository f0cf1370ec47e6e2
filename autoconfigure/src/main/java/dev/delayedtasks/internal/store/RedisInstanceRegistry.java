package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

import dev.delayedtasks.TaskStoreException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.dao.DataAccessException;
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

	/**
	 * How many batches of {@link #MAX_READ} ids a read goes through at most.
	 */
	static final int MAX_BATCHES = 10;

	/**
	 * How many of the least recently reported ids each report checks.
	 */
	static final int SWEPT_PER_REPORT = 100;

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
		long reportedAt = instance.reportedAt().toEpochMilli();
		call(() -> {
			// The entry first: an id in the index without its entry is read as gone.
			this.redis.opsForValue().set(entry(instance.id()), json, ttl);
			this.redis.opsForZSet().add(this.index, instance.id(), reportedAt);
			// Each report sweeps the ids that reported least recently, so those of
			// crashed
			// instances leave whether or not anyone reads the list.
			Set<String> oldest = this.redis.opsForZSet().range(this.index, 0, SWEPT_PER_REPORT - 1);
			if (oldest != null && !oldest.isEmpty()) {
				removeGone(new ArrayList<>(oldest),
						this.redis.opsForValue().multiGet(oldest.stream().map(this::entry).toList()));
			}
			return null;
		});
	}

	/**
	 * Take an instance out at once, as a graceful stop does.
	 * @param id the instance's id
	 */
	public void leave(String id) {
		call(() -> {
			this.redis.opsForZSet().remove(this.index, id);
			this.redis.delete(entry(id));
			return null;
		});
	}

	/**
	 * The instances whose entries live, by id: at most {@link #MAX_READ}, those that
	 * reported last, reading past ids whose entries expired (their instances stopped
	 * reporting; they leave the index) up to {@link #MAX_BATCHES} batches.
	 * @return the instances
	 */
	public Instances alive() {
		return call(() -> {
			List<InstanceRecord> alive = new ArrayList<>();
			List<String> gone = new ArrayList<>();
			long read = 0;
			// Latest reports first; ids whose entries expired are passed over, up to a
			// bound, so that many of them cannot hide a live instance.
			for (int batch = 0; batch < MAX_BATCHES && alive.size() < MAX_READ; batch++) {
				Set<String> latest = this.redis.opsForZSet().reverseRange(this.index, read, read + MAX_READ - 1);
				if (latest == null || latest.isEmpty()) {
					break;
				}
				List<String> ids = new ArrayList<>(latest);
				List<String> values = this.redis.opsForValue().multiGet(ids.stream().map(this::entry).toList());
				for (int i = 0; i < ids.size() && alive.size() < MAX_READ; i++) {
					String value = (values != null) ? values.get(i) : null;
					if (value == null) {
						gone.add(ids.get(i));
					}
					else {
						InstanceRecord instance = read(ids.get(i), value);
						if (instance != null) {
							alive.add(instance);
						}
					}
				}
				read += ids.size();
			}
			if (!gone.isEmpty()) {
				// An instance that reports again between the read and this removal
				// comes back with its next report.
				this.redis.opsForZSet().remove(this.index, gone.toArray());
			}
			Long total = this.redis.opsForZSet().zCard(this.index);
			long unread = Math.max(0, ((total != null) ? total : 0) - (read - gone.size()));
			alive.sort(Comparator.comparing(InstanceRecord::id));
			return new Instances(alive, alive.size() + unread);
		});
	}

	private void removeGone(List<String> ids, @Nullable List<String> values) {
		List<String> gone = new ArrayList<>();
		for (int i = 0; i < ids.size(); i++) {
			if (values == null || values.get(i) == null) {
				gone.add(ids.get(i));
			}
		}
		if (!gone.isEmpty()) {
			this.redis.opsForZSet().remove(this.index, gone.toArray());
		}
	}

	private @Nullable InstanceRecord read(String id, String value) {
		InstanceRecord instance;
		try {
			instance = this.mapper.readValue(value, InstanceRecord.class);
		}
		catch (JacksonException ex) {
			logger
				.warn("The report of instance '" + id + "' cannot be read; it is left out: " + ex.getOriginalMessage());
			return null;
		}
		// Written by something else than an instance under this id: left out too.
		if (!id.equals(instance.id()) || instance.startedAt() == null || instance.reportedAt() == null) {
			logger.warn("The report of instance '" + id + "' does not name it or lacks its times; it is left out");
			return null;
		}
		return instance;
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
	 * @param known the live instances read and the ids not read (more than those listed
	 * when there are more than {@link #MAX_READ})
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

		/**
		 * A report as read, missing parts made empty: a report written by another version
		 * of the library or by hand must not break the page that lists it.
		 * @param id the instance's id
		 * @param host its host name
		 * @param pid its process id
		 * @param application its application name
		 * @param startedAt when it started
		 * @param reportedAt when it reported
		 * @param handlers its handlers
		 */
		public InstanceRecord {
			host = (host != null) ? host : "";
			application = (application != null) ? application : "";
			handlers = (handlers != null) ? List.copyOf(handlers) : List.of();
		}

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

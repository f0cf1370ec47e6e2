package dev.delayedtasks.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.QueueStats;
import dev.delayedtasks.internal.store.RedisQueueStats;
import dev.delayedtasks.internal.store.StoreSettings;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * What the benchmarks ask Redis directly: its version and memory, a queue's counts, and
 * deleting this run's keys. Everything stays under the run's key prefix.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class RedisProbe {

	private static final int SCAN_BATCH = 1000;

	/**
	 * Keys per {@code EXISTS} or {@code UNLINK} of named keys: requests small enough that
	 * Redis holds no large query buffer afterwards, which would count in
	 * {@code used_memory}.
	 */
	private static final int KEY_BATCH = 100;

	/** The commands a script call is counted under, whichever way it was sent. */
	private static final List<String> SCRIPT_COMMANDS = List.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall",
			"fcall_ro");

	// Scripts rather than raw commands: Spring Data Redis reads a raw command's reply as
	// bytes, and MEMORY USAGE answers an integer.
	private static final RedisScript<Long> MEMORY_USAGE = RedisScript
		.of("return redis.call('MEMORY', 'USAGE', KEYS[1], 'SAMPLES', '0')", Long.class);

	private static final RedisScript<String> OBJECT_ENCODING = RedisScript
		.of("return redis.call('OBJECT', 'ENCODING', KEYS[1]) or 'none'", String.class);

	private final StringRedisTemplate redis;

	private final StoreSettings settings;

	private final RedisQueueStats stats;

	RedisProbe(StringRedisTemplate redis, StoreSettings settings, RedisQueueStats stats) {
		this.redis = redis;
		this.settings = settings;
		this.stats = stats;
	}

	String keyPrefix() {
		return this.settings.keyPrefix();
	}

	PartitionKeys keys(String queue) {
		return this.settings.keys(queue);
	}

	String version() {
		return info("server").getProperty("redis_version", "unknown");
	}

	/**
	 * {@code used_memory} from {@code INFO memory}, once Redis has freed what
	 * {@code UNLINK} handed to its background thread.
	 * @return bytes
	 */
	long usedMemory() {
		for (int i = 0; i < 3000 && !"0".equals(info("memory").getProperty("lazyfree_pending_objects", "0")); i++) {
			Pause.millis(10);
		}
		return Long.parseLong(info("memory").getProperty("used_memory"));
	}

	/**
	 * The CPU time Redis used so far, user and system, from {@code INFO cpu}.
	 * @return microseconds
	 */
	long cpuMicros() {
		Properties cpu = info("cpu");
		double seconds = Double.parseDouble(cpu.getProperty("used_cpu_user", "0"))
				+ Double.parseDouble(cpu.getProperty("used_cpu_sys", "0"));
		return Math.round(seconds * 1e6);
	}

	/**
	 * Script calls Redis ran so far and the time it spent in them, summed over
	 * {@code EVAL}, {@code EVALSHA} and {@code FCALL} (and their read-only forms) in
	 * {@code INFO commandstats}: the whole script, the commands it calls included. Counts
	 * every client's calls.
	 * @return calls and microseconds
	 */
	ScriptTime scriptTime() {
		Map<String, CommandTime> times = commandTimes();
		long calls = 0;
		long micros = 0;
		for (String command : SCRIPT_COMMANDS) {
			CommandTime time = times.getOrDefault(command, CommandTime.NONE);
			calls += time.calls();
			micros += time.micros();
		}
		return new ScriptTime(calls, micros);
	}

	/**
	 * Whether a command is a script call ({@code EVAL}, {@code EVALSHA}, {@code FCALL}
	 * and their read-only forms).
	 * @param command the command's name, lower case
	 * @return whether it runs a script
	 */
	static boolean isScript(String command) {
		return SCRIPT_COMMANDS.contains(command);
	}

	/**
	 * Connections Redis accepted so far ({@code total_connections_received} of
	 * {@code INFO stats}), every client's.
	 * @return the count
	 */
	long connectionsReceived() {
		return Long.parseLong(info("stats").getProperty("total_connections_received", "0"));
	}

	/**
	 * Every command's calls and the time Redis spent in it so far, from
	 * {@code INFO commandstats} (every client's; a command a script called counts under
	 * its own name too, and in the script's time).
	 * @return calls and microseconds by command name, lower case
	 */
	Map<String, CommandTime> commandTimes() {
		Properties stats = info("commandstats");
		Map<String, CommandTime> times = new HashMap<>();
		for (String name : stats.stringPropertyNames()) {
			if (name.startsWith("cmdstat_")) {
				times.put(name.substring("cmdstat_".length()), CommandTime.parse(stats.getProperty(name)));
			}
		}
		return times;
	}

	/**
	 * How many of the given keys exist ({@code EXISTS}, a hundred keys a call).
	 * @param keys the keys
	 * @return the count
	 */
	long existing(List<String> keys) {
		Long count = this.redis.execute((RedisCallback<Long>) (connection) -> {
			long found = 0;
			for (int from = 0; from < keys.size(); from += KEY_BATCH) {
				byte[][] batch = keys.subList(from, Math.min(keys.size(), from + KEY_BATCH))
					.stream()
					.map((key) -> key.getBytes(StandardCharsets.UTF_8))
					.toArray(byte[][]::new);
				Long exists = connection.keyCommands().exists(batch);
				found += (exists != null) ? exists : 0;
			}
			return found;
		});
		return (count != null) ? count : 0;
	}

	/**
	 * Delete the given keys ({@code UNLINK}, a hundred keys a call).
	 * @param keys the keys
	 * @return how many existed
	 */
	long delete(List<String> keys) {
		Long deleted = this.redis.execute((RedisCallback<Long>) (connection) -> {
			long count = 0;
			List<byte[]> batch = new ArrayList<>(KEY_BATCH);
			for (String key : keys) {
				batch.add(key.getBytes(StandardCharsets.UTF_8));
				if (batch.size() == KEY_BATCH) {
					count += unlink(connection, batch);
				}
			}
			return count + unlink(connection, batch);
		});
		return (deleted != null) ? deleted : 0;
	}

	/**
	 * {@code MEMORY USAGE key SAMPLES 0}: every element counted.
	 * @param key the key
	 * @return bytes, 0 when the key does not exist
	 */
	long memoryUsage(String key) {
		Long usage = this.redis.execute(MEMORY_USAGE, List.of(key));
		return (usage != null) ? usage : 0;
	}

	String encoding(String key) {
		String encoding = this.redis.execute(OBJECT_ENCODING, List.of(key));
		return (encoding != null) ? encoding : "none";
	}

	QueueStats stats(String queue) {
		return this.stats.read(queue);
	}

	/**
	 * Wait until nothing of a queue is ready or leased, and nothing is due within a
	 * minute (a backlog due later may stay).
	 * @param queue the queue
	 * @param timeout the longest wait
	 * @return whether the queue became idle
	 */
	boolean awaitIdle(String queue, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			QueueStats now = stats(queue);
			if (now.ready() == 0 && now.active() == 0
					&& (now.nextDueMs() < 0 || now.nextDueMs() > now.now() + Duration.ofMinutes(1).toMillis())) {
				return true;
			}
			Pause.millis(20);
		}
		return false;
	}

	/**
	 * The ids in a queue's schedule, ready list and lease set: tasks that are not done
	 * yet, plus hints that cancelled or rescheduled tasks left in the ready list.
	 * @param queue the queue
	 * @return the ids
	 */
	Set<String> queuedIds(String queue) {
		PartitionKeys keys = keys(queue);
		Set<String> ids = new HashSet<>();
		ids.addAll(orEmpty(this.redis.opsForZSet().range(keys.sched(), 0, -1)));
		ids.addAll(orEmpty(this.redis.opsForZSet().range(keys.lease(), 0, -1)));
		ids.addAll(orEmpty(this.redis.opsForList().range(keys.ready(), 0, -1)));
		return ids;
	}

	private static <T> Collection<T> orEmpty(@Nullable Collection<T> values) {
		return (values != null) ? values : List.of();
	}

	/**
	 * Delete every key of a queue.
	 * @param queue the queue
	 * @return the keys deleted
	 */
	long deleteQueue(String queue) {
		return deleteMatching(this.settings.keys(queue).base());
	}

	/**
	 * Delete every key under the run's prefix.
	 * @return the keys deleted
	 */
	long deleteRun() {
		return deleteMatching(this.settings.keyPrefix() + ":");
	}

	private long deleteMatching(String prefix) {
		ScanOptions match = ScanOptions.scanOptions().match(escapeGlob(prefix) + "*").count(SCAN_BATCH).build();
		Long deleted = this.redis.execute((RedisCallback<Long>) (connection) -> {
			long count = 0;
			List<byte[]> batch = new ArrayList<>(SCAN_BATCH);
			try (Cursor<byte[]> keys = connection.keyCommands().scan(match)) {
				while (keys.hasNext()) {
					batch.add(keys.next());
					if (batch.size() == SCAN_BATCH) {
						count += unlink(connection, batch);
					}
				}
			}
			return count + unlink(connection, batch);
		});
		return (deleted != null) ? deleted : 0;
	}

	private static long unlink(RedisConnection connection, List<byte[]> keys) {
		if (keys.isEmpty()) {
			return 0;
		}
		Long count = connection.keyCommands().unlink(keys.toArray(byte[][]::new));
		keys.clear();
		return (count != null) ? count : 0;
	}

	/**
	 * Delete every key of the queues whose names start with the given text, in one pass
	 * over the keys.
	 * @param namePrefix the start of the queues' names
	 * @return the keys deleted
	 */
	long deleteQueuesNamed(String namePrefix) {
		String base = this.settings.keys(namePrefix).base();
		return deleteMatching(base.substring(0, base.indexOf(namePrefix) + namePrefix.length()));
	}

	private Properties info(String section) {
		Properties info = this.redis.execute((RedisCallback<Properties>) (c) -> c.serverCommands().info(section));
		return (info != null) ? info : new Properties();
	}

	private static String escapeGlob(String text) {
		StringBuilder escaped = new StringBuilder();
		for (char c : text.toCharArray()) {
			if ("*?[]\\".indexOf(c) >= 0) {
				escaped.append('\\');
			}
			escaped.append(c);
		}
		return escaped.toString();
	}

	/**
	 * Script calls and the time Redis spent in them, from {@code INFO commandstats}.
	 *
	 * @param calls script calls
	 * @param micros microseconds spent in them
	 */
	record ScriptTime(long calls, long micros) {

		ScriptTime minus(ScriptTime earlier) {
			return new ScriptTime(this.calls - earlier.calls, this.micros - earlier.micros);
		}

	}

}

package dev.delayedtasks.benchmarks;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.internal.store.StoreSettings;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * The soak's record of handler runs, kept in Redis so that the coordinator can count the
 * runs of every worker process, killed ones included. Worker processes write it, one
 * atomic script per run start and per run end, applied once per lease token (it keeps
 * every token: some 100 bytes per run); the coordinator reads it. Its keys lie under the
 * run's key prefix ({@code <prefix>:{soak}:*}), so they are deleted with the run.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class SoakLedger {

	// A run's start, once per lease token (a write retried after a client-side timeout
	// may reach Redis twice): count it, mark it in flight on its process with its
	// delivery (so that the run that replaces it after a kill can be found), note when a
	// run that follows a lost delivery started, count runs that started before their due
	// time, and keep when the task's first run started and when it was due.
	private static final RedisScript<Long> START = RedisScript.of("""
			if redis.call('HSETNX', KEYS[6], ARGV[6], 's') == 0 then return 0 end
			redis.call('HINCRBY', KEYS[1], 'runs', 1)
			redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
			redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
			if tonumber(ARGV[2]) > tonumber(ARGV[3]) then
			  redis.call('HSET', KEYS[4], ARGV[1] .. ':' .. ARGV[2], ARGV[4])
			end
			if ARGV[5] == '1' then redis.call('HINCRBY', KEYS[5], ARGV[1], 1) end
			redis.call('HSETNX', KEYS[7], ARGV[1], ARGV[7])
			return 1""", Long.class);

	// A run's end, once per lease token, before the handler returns or throws: count the
	// outcome, no longer in flight.
	private static final RedisScript<Long> END = RedisScript.of("""
			if redis.call('HGET', KEYS[4], ARGV[3]) ~= 's' then return 0 end
			redis.call('HSET', KEYS[4], ARGV[3], 'e')
			redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
			redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
			redis.call('HDEL', KEYS[3], ARGV[1])
			return 1""", Long.class);

	private static final Duration WRITE_PATIENCE = Duration.ofMinutes(2);

	private final StringRedisTemplate redis;

	private final String base;

	SoakLedger(StringRedisTemplate redis, StoreSettings settings) {
		this.redis = redis;
		this.base = settings.keyPrefix() + ":{soak}:";
	}

	/**
	 * Record the start of a run in this process.
	 * @param context the run
	 */
	void started(TaskContext context) {
		String early = context.startedAt().isBefore(context.dueAt()) ? "1" : "0";
		write(START,
				List.of(key("totals"), key("runs"), inFlightKey(ProcessHandle.current().pid()), key("redelivered"),
						key("early"), key("tokens"), key("first")),
				context.id().value(), Integer.toString(context.deliveryCount()), Integer.toString(context.attempt()),
				Long.toString(System.currentTimeMillis()), early, context.leaseToken(),
				context.startedAt().toEpochMilli() + ":" + context.dueAt().toEpochMilli());
	}

	/**
	 * Record the end of a run in this process.
	 * @param context the run
	 * @param succeeded whether the handler returns normally
	 */
	void ended(TaskContext context, boolean succeeded) {
		String outcome = succeeded ? "succeeded" : "failed";
		write(END, List.of(key("totals"), key(outcome), inFlightKey(ProcessHandle.current().pid()), key("tokens")),
				context.id().value(), outcome, context.leaseToken());
	}

	// Retried for a while: a write that fails (Redis stopped, a command timeout) would
	// fail the run and change the task's fate, which is the library's to decide. A write
	// that timed out on the client may still reach Redis: the scripts apply once per
	// lease token.
	private void write(RedisScript<Long> script, List<String> keys, String... arguments) {
		long deadline = System.nanoTime() + WRITE_PATIENCE.toNanos();
		while (true) {
			try {
				this.redis.execute(script, keys, (Object[]) arguments);
				return;
			}
			catch (RuntimeException ex) {
				if (System.nanoTime() > deadline) {
					throw ex;
				}
				Pause.millis(200);
			}
		}
	}

	/**
	 * The runs a killed process had in flight, removed from the ledger.
	 * @param pid the process
	 * @return task id to the delivery of the run that was in flight
	 */
	Map<String, Integer> takeInFlight(long pid) {
		String key = inFlightKey(pid);
		Map<String, Integer> inFlight = new HashMap<>();
		this.redis.<String, String>opsForHash()
			.entries(key)
			.forEach((id, delivery) -> inFlight.put(id, Integer.parseInt(delivery)));
		this.redis.delete(key);
		return inFlight;
	}

	/**
	 * Runs started, succeeded and failed so far, in all processes.
	 * @return {@code runs}, {@code succeeded} and {@code failed}
	 */
	Map<String, Long> totals() {
		return counts(key("totals"));
	}

	/**
	 * Everything recorded so far.
	 * @return the snapshot
	 */
	Snapshot snapshot() {
		return new Snapshot(counts(key("runs")), counts(key("succeeded")), counts(key("failed")), counts(key("early")),
				counts(key("redelivered")), firstRuns());
	}

	private List<FirstRun> firstRuns() {
		return this.redis.<String, String>opsForHash().values(key("first")).stream().map((value) -> {
			int colon = value.indexOf(':');
			return new FirstRun(Long.parseLong(value.substring(0, colon)), Long.parseLong(value.substring(colon + 1)));
		}).toList();
	}

	private Map<String, Long> counts(String key) {
		Map<String, Long> counts = new HashMap<>();
		this.redis.<String, String>opsForHash()
			.entries(key)
			.forEach((field, value) -> counts.put(field, Long.parseLong(value)));
		return counts;
	}

	private String inFlightKey(long pid) {
		return key("inflight:" + pid);
	}

	private String key(String name) {
		return this.base + name;
	}

	/**
	 * What the ledger holds.
	 *
	 * @param runs task id to runs started
	 * @param succeeded task id to runs that succeeded
	 * @param failed task id to runs that failed as planned
	 * @param early task id to runs that started before the task was due
	 * @param redeliveredStarts {@code <id>:<delivery>} to the local start time (epoch ms)
	 * of runs that follow a lost delivery
	 * @param firstRuns the first run of every task that ran
	 */
	record Snapshot(Map<String, Long> runs, Map<String, Long> succeeded, Map<String, Long> failed,
			Map<String, Long> early, Map<String, Long> redeliveredStarts, List<FirstRun> firstRuns) {

		long runs(String id) {
			return this.runs.getOrDefault(id, 0L);
		}

		long succeeded(String id) {
			return this.succeeded.getOrDefault(id, 0L);
		}

		long failed(String id) {
			return this.failed.getOrDefault(id, 0L);
		}

	}

	/**
	 * The first run of a task, Redis time.
	 *
	 * @param startedAtMillis when it was claimed, epoch ms
	 * @param dueAtMillis when the task was due, epoch ms
	 */
	record FirstRun(long startedAtMillis, long dueAtMillis) {

	}

}

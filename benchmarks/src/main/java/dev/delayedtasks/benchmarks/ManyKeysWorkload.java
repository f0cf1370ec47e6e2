package dev.delayedtasks.benchmarks;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimit;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.autoconfigure.DelayedTasksProperties;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.QueueCounter;
import dev.delayedtasks.internal.store.TaskStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * {@code many-keys}: what a claim costs in Redis on a queue with a {@code key-rate-limit}
 * (5/10s unless {@code bench.many-keys.key-rate-limit} says otherwise) while 10,000 rate
 * keys have their window, against a queue of the same shape without one. Ready tasks are
 * spread round-robin over the keys ({@code tasksPerKey} per key, no more than the limit
 * lets through, so none is set aside); a first pass of claims gives every key its window
 * ({@code ks:<key>}), then the rest are claimed in batches as a dispatcher claims them,
 * and {@code INFO commandstats} says how long Redis spent in those script calls. No
 * handler runs: the claims go through the store, one after the other, and their tasks
 * stay leased until the queue is deleted. Also measures the memory of the keys' state:
 * {@code used_memory} with it and once it was deleted (what its expiry frees a window
 * after the last lease), and {@code MEMORY USAGE} of the windows.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
@Order(12)
class ManyKeysWorkload implements Workload {

	private static final Log logger = LogFactory.getLog(ManyKeysWorkload.class);

	private static final int ENQUEUE_BATCH = 1000;

	private static final int MEMORY_SAMPLE = 1000;

	private final TaskStore store;

	private final TaskProducer producer;

	private final RedisProbe redis;

	private final QueueControl queues;

	private final RateLimit keyLimit;

	private final BenchmarkProperties.ManyKeys settings;

	ManyKeysWorkload(TaskStore store, TaskProducer producer, RedisProbe redis, QueueControl queues,
			DelayedTasksProperties library, BenchmarkProperties properties) {
		this.store = store;
		this.producer = producer;
		this.redis = redis;
		this.queues = queues;
		RateLimit configured = library.limits(Queues.MANY_KEYS).keyRateLimit();
		if (configured == null) {
			throw new IllegalStateException("Queue '" + Queues.MANY_KEYS
					+ "' has no key rate limit: set bench.many-keys.key-rate-limit, for example 5/10s");
		}
		this.keyLimit = configured;
		this.settings = properties.manyKeys();
	}

	@Override
	public String name() {
		return "many-keys";
	}

	@Override
	public List<WorkloadResult> run() {
		List<ClaimRound> control = new ArrayList<>();
		List<ClaimRound> keyed = new ArrayList<>();
		for (int round = 0; round < this.settings.rounds(); round++) {
			control.add(measure(null, false));
			keyed.add(measure(this.keyLimit, round == 0));
		}
		ClaimRound fastControl = fastest(control);
		ClaimRound fast = fastest(keyed);
		ClaimRound first = keyed.get(0);
		Map<String, Object> fields = WorkloadResult.fields("keys", this.settings.keys(), "key_rate_limit",
				this.keyLimit, "tasks_per_key", this.settings.tasksPerKey(), "claim_batch", this.settings.claimBatch(),
				"rounds", this.settings.rounds(), "measured_tasks", fast.tasks(), "claims", fast.claims(),
				"claims_per_s", fast.perSecond(), "script_us_per_claim", fast.microsPerClaim(), "script_us_per_task",
				fast.microsPerTask(), "redis_cpu_us_per_task", fast.redisCpuMicrosPerTask(), "script_us_per_claim_all",
				perClaim(keyed), "control_claims_per_s", fastControl.perSecond(), "control_script_us_per_claim",
				fastControl.microsPerClaim(), "control_script_us_per_task", fastControl.microsPerTask(),
				"control_redis_cpu_us_per_task", fastControl.redisCpuMicrosPerTask(), "control_script_us_per_claim_all",
				perClaim(control), "ratio_per_claim", fast.microsPerClaim() / fastControl.microsPerClaim(),
				"extra_us_per_task", fast.microsPerTask() - fastControl.microsPerTask(), "other_script_calls",
				sum(keyed, ClaimRound::otherScriptCalls) + sum(control, ClaimRound::otherScriptCalls), "set_aside",
				sum(keyed, ClaimRound::setAside), "pass_max_ms",
				keyed.stream().mapToLong(ClaimRound::longestPassNanos).max().orElse(0) / 1_000_000, "ks_keys",
				keyed.stream().mapToLong(ClaimRound::windowKeys).min().orElse(0), "kp_keys",
				sum(keyed, ClaimRound::lineKeys), "key_state_bytes", first.stateBytes(), "key_state_bytes_per_key",
				(double) first.stateBytes() / Math.max(1, first.windowKeys()), "ks_usage_bytes", first.windowUsage(),
				"unclaimed", sum(keyed, ClaimRound::unclaimed) + sum(control, ClaimRound::unclaimed));
		return List.of(WorkloadResult.of(name(), fields, null));
	}

	private static ClaimRound fastest(List<ClaimRound> rounds) {
		return rounds.stream().min(Comparator.comparingDouble(ClaimRound::microsPerClaim)).orElseThrow();
	}

	private static String perClaim(List<ClaimRound> rounds) {
		return rounds.stream()
			.map((round) -> Long.toString(Math.round(round.microsPerClaim())))
			.collect(Collectors.joining(","));
	}

	private static long sum(List<ClaimRound> rounds, ToLongFunction<ClaimRound> figure) {
		return rounds.stream().mapToLong(figure).sum();
	}

	/**
	 * One round: fill the queue, prime every key's window, then claim the rest.
	 * @param limit the queue's key rate limit, {@code null} for the control (no limit and
	 * tasks without rate keys)
	 * @param memory whether to measure the memory of the keys' state
	 * @return what the measured claims cost
	 */
	private ClaimRound measure(@Nullable RateLimit limit, boolean memory) {
		String queue = Queues.MANY_KEYS;
		int keys = this.settings.keys();
		int total = keys * this.settings.tasksPerKey();
		this.redis.deleteQueue(queue);
		if (limit != null) {
			this.queues.setLimits(queue, new QueueLimits(null, null, limit));
		}
		this.producer.inBatches(total, ENQUEUE_BATCH, (i) -> {
			TaskRequest request = TaskRequest.of(queue, i);
			return (limit != null) ? request.rateKey(rateKey(i % keys)) : request;
		}, EnqueueSink.NONE);
		// The ready list is in scheduling order: the first pass holds one task of every
		// key.
		Claimed primed = claim(queue, keys);
		RedisProbe.ScriptTime before = this.redis.scriptTime();
		long cpuBefore = this.redis.cpuMicros();
		long start = System.nanoTime();
		Claimed measured = claim(queue, total - keys);
		long nanos = System.nanoTime() - start;
		RedisProbe.ScriptTime spent = this.redis.scriptTime().minus(before);
		long cpu = this.redis.cpuMicros() - cpuBefore;
		PartitionKeys partition = this.redis.keys(queue);
		List<String> windows = keyNames(partition, "ks:");
		List<String> lines = keyNames(partition, "kp:");
		long windowKeys = this.redis.existing(windows);
		long lineKeys = this.redis.existing(lines);
		long setAside = this.redis.stats(queue).counter(QueueCounter.SET_ASIDE_BY_KEY);
		long usage = 0;
		long stateBytes = 0;
		if (limit != null && memory) {
			usage = sampledUsage(windows);
			long withState = quietUsedMemory();
			// What the keys' expiry would free a window after their last lease, at once.
			this.redis.delete(windows);
			this.redis.delete(lines);
			stateBytes = withState - quietUsedMemory();
		}
		this.redis.deleteQueue(queue);
		int unclaimed = total - primed.tasks() - measured.tasks();
		if (unclaimed != 0) {
			logger.warn("Queue '" + queue + "': " + unclaimed + " of " + total + " tasks were not claimed");
		}
		return new ClaimRound(measured.tasks(), measured.calls(), nanos,
				Math.max(primed.longestPassNanos(), measured.longestPassNanos()), spent, cpu, setAside, windowKeys,
				lineKeys, stateBytes, usage, unclaimed);
	}

	/**
	 * Claim up to {@code count} tasks, {@code claimBatch} at a time, until a claim leases
	 * none.
	 * @param queue the queue
	 * @param count how many
	 * @return how many were leased, in how many calls, and the longest pass over the keys
	 */
	private Claimed claim(String queue, int count) {
		int keys = this.settings.keys();
		int leased = 0;
		int calls = 0;
		long passStart = System.nanoTime();
		long longestPass = 0;
		while (leased < count) {
			ClaimBatch batch = this.store.claim(queue, Math.min(this.settings.claimBatch(), count - leased),
					"bench-many-keys." + (++calls));
			if (batch.tasks().isEmpty()) {
				break;
			}
			int before = leased;
			leased += batch.tasks().size();
			if (leased / keys > before / keys) {
				long now = System.nanoTime();
				longestPass = Math.max(longestPass, now - passStart);
				passStart = now;
			}
		}
		return new Claimed(leased, calls, longestPass);
	}

	/**
	 * The least {@code used_memory} of a few readings 100 ms apart: without what Redis
	 * holds for a moment (a client's buffers), which would otherwise count as state.
	 * @return bytes
	 */
	private long quietUsedMemory() {
		long least = Long.MAX_VALUE;
		for (int i = 0; i < 3; i++) {
			Pause.millis(100);
			least = Math.min(least, this.redis.usedMemory());
		}
		return least;
	}

	/**
	 * Average {@code MEMORY USAGE} of up to a thousand of the keys that exist.
	 * @param keys the keys
	 * @return bytes per key, 0 when none exists
	 */
	private long sampledUsage(List<String> keys) {
		long total = 0;
		int found = 0;
		for (int i = 0; i < keys.size() && found < MEMORY_SAMPLE; i++) {
			long usage = this.redis.memoryUsage(keys.get(i));
			if (usage > 0) {
				total += usage;
				found++;
			}
		}
		return (found > 0) ? total / found : 0;
	}

	private List<String> keyNames(PartitionKeys partition, String kind) {
		List<String> names = new ArrayList<>(this.settings.keys());
		for (int key = 0; key < this.settings.keys(); key++) {
			names.add(partition.base() + kind + rateKey(key));
		}
		return names;
	}

	private static String rateKey(int key) {
		return "customer-" + key;
	}

	/**
	 * ClaimRound made one after the other.
	 *
	 * @param tasks tasks they leased
	 * @param calls claim calls
	 * @param longestPassNanos the longest time a pass of one task per key took: every
	 * key's window lived through the claims if it is shorter than the window
	 */
	private record Claimed(int tasks, int calls, long longestPassNanos) {

	}

}

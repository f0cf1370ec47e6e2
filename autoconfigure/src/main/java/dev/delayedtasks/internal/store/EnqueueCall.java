package dev.delayedtasks.internal.store;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.delayedtasks.DelayedTaskException;
import dev.delayedtasks.ScheduleResult;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.Reply;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.ScriptReplies;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * The {@code enqueue} script call in the form Redis takes it: keys and arguments as
 * bytes, and its reply read straight from the bytes Redis sent. A queue's fixed keys and
 * key prefix are encoded once and reused, so a {@code schedule} encodes only what is its
 * own (id, due time, envelope). Shared by the blocking and the non-blocking paths.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class EnqueueCall {

	/** Queues whose encoded keys are kept; past that, keys are encoded per call. */
	private static final int CACHED_QUEUES = 1024;

	private static final byte[] TASK = ascii("t:");

	private static final byte[] PAYLOAD = ascii("p:");

	private static final byte[] UNIQUE = ascii("u:");

	private static final byte[] DELAY = ascii("D");

	private static final byte[] ABSOLUTE = ascii("A");

	/** No expiry, no outcome record. */
	private static final byte[] NONE = ascii("0");

	private static final byte[] LAYOUT = ascii(LayoutVersion.CURRENT);

	/**
	 * Arguments of one task: id, mode, time, max attempts, unique TTL, expiry, outcome,
	 * envelope, rate key, cost, priority.
	 */
	private static final int ARGS_PER_TASK = 11;

	private final StoreSettings settings;

	private final PayloadCodec codec;

	private final byte[] fanoutBatch;

	private final Map<String, QueueKeys> keys = new ConcurrentHashMap<>();

	/**
	 * Create the call.
	 * @param settings the key prefix and limits
	 * @param codec encodes the envelopes of tasks that are sent without one
	 */
	public EnqueueCall(StoreSettings settings, PayloadCodec codec) {
		this.settings = settings;
		this.codec = codec;
		this.fanoutBatch = ascii(Integer.toString(settings.fanoutBatch()));
	}

	/**
	 * How many keys a call for {@code tasks} tasks passes.
	 * @param tasks the tasks
	 * @return the key count
	 */
	public static int keyCount(int tasks) {
		return Script.ENQUEUE.fixedKeys() + Script.ENQUEUE.keysPerItem() * tasks;
	}

	/**
	 * The keys, then the arguments, of one call for tasks of one queue.
	 * @param queue the queue
	 * @param tasks the tasks, at least one
	 * @return the keys and arguments
	 */
	public byte[][] encode(String queue, List<PreparedTask> tasks) {
		return encode(queue, tasks, null);
	}

	/**
	 * The keys, then the arguments, of one call for tasks of one queue, whose ready tasks
	 * a dispatcher of this process may take.
	 * @param queue the queue
	 * @param tasks the tasks, at least one
	 * @param handoff what to lease for the dispatcher, or {@code null}
	 * @return the keys and arguments
	 */
	public byte[][] encode(String queue, List<PreparedTask> tasks, TaskHandoff.@Nullable HandoffLease handoff) {
		QueueKeys queueKeys = keysOf(queue);
		int n = tasks.size();
		int keyCount = keyCount(n);
		byte[][] call = new byte[keyCount + 5 + ARGS_PER_TASK * n][];
		System.arraycopy(queueKeys.fixed, 0, call, 0, queueKeys.fixed.length);
		int arg = keyCount;
		call[arg++] = queueKeys.base;
		call[arg++] = ascii(Integer.toString(n));
		call[arg++] = LAYOUT;
		call[arg++] = this.fanoutBatch;
		call[arg++] = (handoff != null) ? ascii(
				handoff.nonce() + " " + handoff.max() + " " + handoff.leaseMs() + " " + (handoff.tick() ? "1" : "0"))
				: NONE;
		int key = queueKeys.fixed.length;
		for (PreparedTask task : tasks) {
			byte[] id = ascii(task.id().value());
			call[key++] = concat(queueKeys.base, TASK, id);
			call[key++] = concat(queueKeys.base, PAYLOAD, id);
			String digest = task.uniqueDigest();
			call[key++] = concat(queueKeys.base, UNIQUE, (digest != null) ? ascii(digest) : new byte[0]);
			call[arg++] = id;
			call[arg++] = task.absolute() ? ABSOLUTE : DELAY;
			call[arg++] = ascii(Long.toString(task.time()));
			call[arg++] = ascii(Integer.toString(task.maxAttempts()));
			call[arg++] = ascii(Long.toString(task.uniqueTtlMs()));
			call[arg++] = "0".equals(task.expiry()) ? NONE : ascii(task.expiry());
			call[arg++] = PreparedTask.NO_OUTCOME.equals(task.outcome()) ? NONE
					: task.outcome().getBytes(StandardCharsets.UTF_8);
			call[arg++] = task.envelope(this.codec).getBytes(StandardCharsets.UTF_8);
			String rateKey = task.request().rateKey();
			call[arg++] = (rateKey != null) ? ascii(rateKey) : new byte[0];
			Integer cost = task.request().cost();
			call[arg++] = (cost != null && cost > 1) ? ascii(Integer.toString(cost)) : new byte[0];
			Integer priority = task.request().priority();
			call[arg++] = (priority != null && priority != TaskRequest.DEFAULT_PRIORITY)
					? ascii(Integer.toString(priority)) : new byte[0];
		}
		return call;
	}

	/**
	 * Read the reply of a call: one outcome per task, in order.
	 * @param queue the queue
	 * @param tasks the tasks of the call
	 * @param reply the reply as Redis sent it
	 * @return the outcomes
	 * @throws DelayedTaskException when the queue's stored layout is another one
	 * @throws IllegalStateException when the reply is not one of {@code enqueue}'s
	 */
	public List<Outcome> outcomes(String queue, List<PreparedTask> tasks, List<Object> reply) {
		if (reply.size() == 3 && "LAYOUT".equals(text(reply.get(1)))) {
			throw LayoutVersion.mismatch(queue, text(reply.get(2)));
		}
		if (reply.size() != 2 + 4 * tasks.size()) {
			throw unexpected(reply);
		}
		List<Outcome> outcomes = new ArrayList<>(tasks.size());
		for (int i = 0; i < tasks.size(); i++) {
			int at = 2 + i * 4;
			String code = text(reply.get(at));
			String leaseToken = "L".equals(code) ? text(reply.get(at + 3)) : null;
			ScheduleResult.Outcome outcome = switch (code) {
				case "C", "L" -> ScheduleResult.Outcome.CREATED;
				case "E" -> ScheduleResult.Outcome.EXISTING;
				case "U" -> ScheduleResult.Outcome.DUPLICATE;
				case "K" -> null;
				default -> throw unexpected(reply);
			};
			if (outcome == null) {
				outcomes.add(new Outcome(null,
						new DelayedTaskException("Task " + tasks.get(i).id() + " of queue '" + queue
								+ "' was corrupt in Redis; it was moved to the dead letters, so schedule it with"
								+ " another id"),
						null));
			}
			else {
				outcomes.add(new Outcome(new ScheduleResult(TaskId.of(text(reply.get(at + 1))), outcome,
						Instant.ofEpochMilli(number(reply.get(at + 2)))), null, leaseToken));
			}
		}
		return outcomes;
	}

	/**
	 * The tasks a call leased for a dispatcher of this process, as a claim would have
	 * returned them, with the envelopes the call sent (a call whose tasks carry none is
	 * not handed off).
	 * @param tasks the tasks of the call
	 * @param outcomes their outcomes, from {@link #outcomes}
	 * @param redisNowMs the Redis time of the call ({@link #redisMillis})
	 * @return the leased tasks, in call order
	 */
	public static List<ClaimedTask> handedOff(List<PreparedTask> tasks, List<Outcome> outcomes, long redisNowMs) {
		List<ClaimedTask> leased = new ArrayList<>(1);
		for (int i = 0; i < tasks.size(); i++) {
			Outcome outcome = outcomes.get(i);
			ScheduleResult result = outcome.result();
			if (outcome.leaseToken() != null && result != null && result.dueAt() != null) {
				PreparedTask task = tasks.get(i);
				String envelope = task.envelope();
				Assert.state(envelope != null, () -> "Task " + task.id() + " was handed off without its envelope");
				leased.add(new ClaimedTask(task.id(), outcome.leaseToken(), envelope, 0, 1, task.maxAttempts(),
						result.dueAt().toEpochMilli(), redisNowMs, task.uniqueDigest()));
			}
		}
		return leased;
	}

	/**
	 * Whether {@code enqueue} found the queue's partition without a layout version: new,
	 * or removed from the index by {@code remove} (its reply's second element is 1). The
	 * caller then adds the queue to the index again, after this write, even if it
	 * registered the queue before. Only for a reply {@link #outcomes} accepted.
	 * @param reply the reply as Redis sent it
	 * @return whether the partition was fresh
	 */
	public static boolean fresh(List<Object> reply) {
		return number(reply.get(1)) == 1;
	}

	/**
	 * Redis's time when {@code enqueue} ran, the first element of its reply.
	 * @param reply the reply as Redis sent it
	 * @return the time, in epoch milliseconds
	 */
	public static long redisMillis(List<Object> reply) {
		return number(reply.get(0));
	}

	private static IllegalStateException unexpected(List<Object> reply) {
		return RedisTaskStore.unexpected(Script.ENQUEUE, new Reply(ScriptReplies.decode(reply)));
	}

	private QueueKeys keysOf(String queue) {
		QueueKeys queueKeys = this.keys.get(queue);
		if (queueKeys == null) {
			queueKeys = new QueueKeys(this.settings.keys(queue));
			if (this.keys.size() < CACHED_QUEUES) {
				this.keys.put(queue, queueKeys);
			}
		}
		return queueKeys;
	}

	private static String text(@Nullable Object value) {
		if (value instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		return (value != null) ? value.toString() : "";
	}

	private static long number(@Nullable Object value) {
		return (value instanceof Long number) ? number : Long.parseLong(text(value));
	}

	private static byte[] ascii(String text) {
		// Keys, ids, digests and numbers are ASCII (names are checked), so one byte per
		// character.
		return text.getBytes(StandardCharsets.ISO_8859_1);
	}

	private static byte[] concat(byte[] a, byte[] b, byte[] c) {
		byte[] joined = new byte[a.length + b.length + c.length];
		System.arraycopy(a, 0, joined, 0, a.length);
		System.arraycopy(b, 0, joined, a.length, b.length);
		System.arraycopy(c, 0, joined, a.length + b.length, c.length);
		return joined;
	}

	/**
	 * The outcome of one task of a call: a result, or the reason it has none.
	 *
	 * @param result the result, or {@code null} when the task failed
	 * @param failure why the task failed, or {@code null}
	 * @param leaseToken the token of the lease the call took for a dispatcher of this
	 * process ({@link TaskHandoff}), or {@code null} when it took none for this task
	 */
	public record Outcome(@Nullable ScheduleResult result, @Nullable RuntimeException failure,
			@Nullable String leaseToken) {

		/**
		 * The result, or the failure thrown.
		 * @return the result
		 */
		public ScheduleResult get() {
			if (this.failure != null) {
				throw this.failure;
			}
			return this.result;
		}

	}

	/** The encoded fixed keys of a queue's partition. */
	private static final class QueueKeys {

		private final byte[] base;

		private final byte[][] fixed;

		QueueKeys(PartitionKeys keys) {
			this.base = ascii(keys.base());
			this.fixed = new byte[][] { ascii(keys.sched()), ascii(keys.ready()), ascii(keys.wake()),
					ascii(keys.tick()), ascii(keys.stats()), ascii(keys.meta()) };
		}

	}

}

package dev.delayedtasks.internal.store;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.RateLimitedException;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.script.Reply;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * {@link TaskStore} on Redis: each operation is one call of one Lua script.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisTaskStore implements TaskStore {

	private static final int CLAIM_HEADER = 8;

	private static final int CLAIM_RECORD_WIDTH = 9;

	private static final int PROMOTE_HEADER = 8;

	/**
	 * How many of the newest leases {@link #recover} looks at: far more than one
	 * dispatcher claims during an outage, and few enough to stay a short script.
	 */
	private static final int RECOVER_SCAN_LIMIT = 10_000;

	private final StoreScripts scripts;

	private final StoreSettings settings;

	/**
	 * Create a store.
	 * @param scripts the scripts
	 * @param settings limits and durations
	 */
	public RedisTaskStore(StoreScripts scripts, StoreSettings settings) {
		this.scripts = scripts;
		this.settings = settings;
	}

	@Override
	public ClaimBatch claim(String queue, int max, String nonce) {
		PartitionKeys keys = this.settings.keys(queue);
		List<String> args = List.of(keys.base(), Integer.toString(max), millis(this.settings.leaseDuration()), nonce,
				Integer.toString(this.settings.promoteLimit()), Integer.toString(this.settings.reapLimit()),
				millis(this.settings.reapGrace()), Integer.toString(this.settings.fanoutBatch()),
				Integer.toString(this.settings.maxDeliveries()), Integer.toString(max + 64),
				Long.toString(this.settings.claimByteBudget()), this.settings.expiredToDeadLetters() ? "D" : "X",
				millis(this.settings.timerRearmInterval()));
		Reply reply = new Reply(this.scripts.run(Script.CLAIM, List.of(keys.sched(), keys.ready(), keys.lease(),
				keys.dead(), keys.wake(), keys.tick(), keys.stats(), keys.meta()), args, queue, null));
		List<ClaimedTask> tasks = leased(reply, CLAIM_HEADER, (int) reply.number(5));
		List<ExpiredTask> expired = expired(reply.text(6));
		return new ClaimBatch(reply.number(0), reply.number(1), reply.number(2), reply.number(3) == 1,
				reply.number(4) == 1, tasks, expired, reply.number(7));
	}

	@Override
	public boolean configureLimits(String queue, QueueLimits configured) {
		PartitionKeys keys = this.settings.keys(queue);
		String encoded = FlowLimits.encode(configured);
		try {
			Object last = redis().opsForHash().get(keys.meta(), FlowLimits.CONFIGURED_FIELD);
			if (encoded.equals((last != null) ? last : FlowLimits.encode(QueueLimits.NONE))) {
				return false;
			}
			// One command writes both: the limits in force and the configuration they
			// came from.
			redis().opsForHash()
				.putAll(keys.meta(), Map.of(FlowLimits.FIELD, encoded, FlowLimits.CONFIGURED_FIELD, encoded));
			redis().opsForList().rightPush(keys.wake(), "1");
			return true;
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException(
					"Redis failed to set the flow control of queue '" + queue + "': " + StoreScripts.reason(ex), null,
					ex);
		}
	}

	/**
	 * The tasks a reply of {@code claim} or {@code promote} leased: 9 fields each.
	 * @param reply the reply
	 * @param header where the first task's fields start
	 * @param count how many tasks it leased
	 * @return the tasks
	 */
	private static List<ClaimedTask> leased(Reply reply, int header, int count) {
		List<ClaimedTask> tasks = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			int at = header + i * CLAIM_RECORD_WIDTH;
			String unique = reply.text(at + 8);
			tasks.add(new ClaimedTask(TaskId.of(reply.text(at)), reply.text(at + 1), reply.text(at + 2),
					(int) reply.number(at + 3), (int) reply.number(at + 4), (int) reply.number(at + 5),
					reply.number(at + 6), reply.number(at + 7), unique.isEmpty() ? null : unique));
		}
		return tasks;
	}

	/**
	 * The tasks a claim ended because they expired, from its reply's space-separated id,
	 * attempts, creation and expiry of each (ids hold no space).
	 * @param fields the reply's field
	 * @return the tasks
	 */
	private static List<ExpiredTask> expired(String fields) {
		if (fields.isEmpty()) {
			return List.of();
		}
		String[] values = fields.split(" ");
		List<ExpiredTask> expired = new ArrayList<>(values.length / 4);
		for (int at = 0; at + 3 < values.length; at += 4) {
			expired.add(new ExpiredTask(TaskId.of(values[at]), Integer.parseInt(values[at + 1]),
					Instant.ofEpochMilli(Long.parseLong(values[at + 2])),
					Instant.ofEpochMilli(Long.parseLong(values[at + 3]))));
		}
		return expired;
	}

	@Override
	public TimerTick promote(String queue, String ownerId, Duration timerTtl, boolean tickConsumed,
			TaskHandoff.@Nullable HandoffLease handoff) {
		Reply reply = runPromote(queue, ownerId, Math.max(1, timerTtl.toMillis()), tickConsumed, handoff);
		return new TimerTick(reply.number(0), reply.number(1) == 1, reply.number(2), reply.number(3), reply.number(4),
				reply.number(5) == 1, leased(reply, PROMOTE_HEADER, (int) reply.number(6)), expired(reply.text(7)));
	}

	@Override
	public void resignTimer(String queue, String ownerId) {
		runPromote(queue, ownerId, 0, false, null);
	}

	private Reply runPromote(String queue, String ownerId, long ttlMillis, boolean tickConsumed,
			TaskHandoff.@Nullable HandoffLease handoff) {
		PartitionKeys keys = this.settings.keys(queue);
		String handoffArgument = (handoff != null)
				? handoff.nonce() + " " + handoff.max() + " " + handoff.leaseMs() + " " + (handoff.max() + 64) + " "
						+ this.settings.claimByteBudget() + " " + (this.settings.expiredToDeadLetters() ? "D" : "X")
				: "0";
		List<String> args = List.of(keys.base(), ownerId, Long.toString(ttlMillis),
				Integer.toString(this.settings.promoteLimit()), Integer.toString(this.settings.reapLimit()),
				millis(this.settings.reapGrace()), Integer.toString(this.settings.fanoutBatch()),
				Integer.toString(this.settings.maxDeliveries()), tickConsumed ? "1" : "0", handoffArgument);
		return new Reply(
				this.scripts.run(Script.PROMOTE,
						List.of(keys.sched(), keys.ready(), keys.lease(), keys.dead(), keys.wake(), keys.tick(),
								keys.timer(), keys.stats(), keys.handover(), keys.meta()),
						args, queue, null, handoff == null));
	}

	@Override
	public List<AckOutcome> ack(String queue, List<Lease> leases, List<@Nullable String> results) {
		PartitionKeys keys = this.settings.keys(queue);
		List<String> keyList = new ArrayList<>(List.of(keys.lease(), keys.stats()));
		List<String> args = new ArrayList<>(List.of(keys.base(), Integer.toString(leases.size())));
		for (int i = 0; i < leases.size(); i++) {
			Lease lease = leases.get(i);
			addTaskKeys(keyList, keys, lease);
			args.add(lease.id().value());
			args.add(lease.token());
			String result = results.get(i);
			args.add((result != null) ? result : "");
		}
		Reply reply = new Reply(this.scripts.run(Script.ACK, keyList, args, queue, null));
		return codes(reply, leases.size(), (code) -> switch (code) {
			case 'O' -> AckOutcome.DONE;
			case 'S' -> AckOutcome.STALE;
			case 'G' -> AckOutcome.GONE;
			case 'K' -> AckOutcome.CORRUPT;
			default -> throw unexpected(Script.ACK, reply);
		});
	}

	@Override
	public FailOutcome fail(String queue, Lease lease, TaskFailure failure) {
		PartitionKeys keys = this.settings.keys(queue);
		String id = lease.id().value();
		List<String> keyList = List.of(keys.sched(), keys.ready(), keys.lease(), keys.dead(), keys.wake(), keys.tick(),
				keys.stats(), keys.task(id), keys.payload(id), keys.error(id), keys.unique(lease.uniqueDigest()));
		String delay = (failure.retryDelay() != null) ? millis(failure.retryDelay()) : "-1";
		List<String> args = List.of(keys.base(), id, lease.token(), delay, failure.deadReason().value(),
				failure.exceptionType(), failure.message(), Integer.toString(this.settings.deadLetterMaxCount()),
				millis(this.settings.deadLetterMaxAge()), Integer.toString(this.settings.trimLimit()),
				Integer.toString(this.settings.fanoutBatch()), failure.stackTrace());
		Reply reply = new Reply(this.scripts.run(Script.FAIL, keyList, args, queue, id));
		FailOutcome.Kind kind = switch (reply.code(1)) {
			case 'T' -> FailOutcome.Kind.RETRY_SCHEDULED;
			case 'R' -> FailOutcome.Kind.RETRY_READY;
			case 'D' -> FailOutcome.Kind.DEAD;
			case 'C' -> FailOutcome.Kind.CANCELLED;
			case 'S' -> FailOutcome.Kind.STALE;
			case 'G' -> FailOutcome.Kind.GONE;
			case 'K' -> FailOutcome.Kind.CORRUPT;
			default -> throw unexpected(Script.FAIL, reply);
		};
		return new FailOutcome(reply.number(0), kind, reply.number(2));
	}

	@Override
	public List<ExtendOutcome> extend(String queue, List<Lease> leases) {
		PartitionKeys keys = this.settings.keys(queue);
		List<String> keyList = new ArrayList<>(List.of(keys.lease()));
		List<String> args = new ArrayList<>(
				List.of(millis(this.settings.leaseDuration()), Integer.toString(leases.size())));
		for (Lease lease : leases) {
			keyList.add(keys.task(lease.id().value()));
			args.add(lease.id().value());
			args.add(lease.token());
		}
		Reply reply = new Reply(this.scripts.run(Script.EXTEND, keyList, args, queue, null));
		return codes(reply, leases.size(), (code) -> switch (code) {
			case 'O' -> ExtendOutcome.EXTENDED;
			case 'C' -> ExtendOutcome.CANCEL_REQUESTED;
			case 'L' -> ExtendOutcome.LOST;
			default -> throw unexpected(Script.EXTEND, reply);
		});
	}

	@Override
	public List<ReleaseOutcome> release(String queue, List<Lease> leases, Duration hold,
			RateLimitedException.Scope scope) {
		PartitionKeys keys = this.settings.keys(queue);
		List<String> keyList = new ArrayList<>(List.of(keys.ready(), keys.lease(), keys.wake(), keys.stats()));
		String holdMs = ((scope == RateLimitedException.Scope.KEY) ? "K" : "") + Math.max(0, hold.toMillis());
		List<String> args = new ArrayList<>(List.of(keys.base(), Integer.toString(this.settings.fanoutBatch()), holdMs,
				Integer.toString(leases.size())));
		for (Lease lease : leases) {
			addTaskKeys(keyList, keys, lease);
			args.add(lease.id().value());
			args.add(lease.token());
		}
		Reply reply = new Reply(this.scripts.run(Script.RELEASE, keyList, args, queue, null));
		return codes(reply, leases.size(), (code) -> switch (code) {
			case 'O' -> ReleaseOutcome.RELEASED;
			case 'C' -> ReleaseOutcome.CANCELLED;
			case 'L' -> ReleaseOutcome.LOST;
			case 'G' -> ReleaseOutcome.GONE;
			default -> throw unexpected(Script.RELEASE, reply);
		});
	}

	@Override
	public int recover(String queue, List<String> claimNonces) {
		PartitionKeys keys = this.settings.keys(queue);
		List<String> args = new ArrayList<>(List.of(keys.base(), Integer.toString(this.settings.fanoutBatch()),
				Integer.toString(RECOVER_SCAN_LIMIT), Integer.toString(claimNonces.size())));
		args.addAll(claimNonces);
		Reply reply = new Reply(this.scripts.run(Script.RECOVER,
				List.of(keys.ready(), keys.lease(), keys.wake(), keys.stats()), args, queue, null));
		return (int) reply.number(1);
	}

	private static void addTaskKeys(List<String> keyList, PartitionKeys keys, Lease lease) {
		String id = lease.id().value();
		keyList.add(keys.task(id));
		keyList.add(keys.payload(id));
		keyList.add(keys.error(id));
		keyList.add(keys.unique(lease.uniqueDigest()));
	}

	private static <T> List<T> codes(Reply reply, int count, Function<Character, T> mapping) {
		List<T> outcomes = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			outcomes.add(mapping.apply(reply.code(1 + i)));
		}
		return outcomes;
	}

	/**
	 * The failure for a reply that no version of the script gives.
	 * @param script the script
	 * @param reply its reply
	 * @return the exception to throw
	 */
	public static IllegalStateException unexpected(Script script, Reply reply) {
		return new IllegalStateException("Unexpected reply from " + script.fileName() + ": " + reply);
	}

	/**
	 * A duration as a script argument.
	 * @param duration the duration
	 * @return its milliseconds
	 */
	public static String millis(Duration duration) {
		return Long.toString(duration.toMillis());
	}

	private StringRedisTemplate redis() {
		return this.scripts.template();
	}

}

package dev.delayedtasks.internal.tracking;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskRecords;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.Reply;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * Reads the outcome records that the ending scripts write ({@code includes/outcome.lua})
 * and asks a live task to name a tracker ({@code track.lua}).
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class OutcomeRecords {

	private final StoreScripts scripts;

	private final StoreSettings settings;

	private final PayloadCodec codec;

	/**
	 * Create the reader.
	 * @param scripts runs the scripts
	 * @param settings the key prefix
	 * @param codec reads results
	 */
	public OutcomeRecords(StoreScripts scripts, StoreSettings settings, PayloadCodec codec) {
		this.scripts = scripts;
		this.settings = settings;
		this.codec = codec;
	}

	/**
	 * The outcome record of a task.
	 * @param queue the queue
	 * @param id the task
	 * @return the outcome, empty when none is kept
	 */
	public Optional<TaskOutcome> read(String queue, TaskId id) {
		try {
			Map<Object, Object> fields = this.scripts.template()
				.opsForHash()
				.entries(this.settings.keys(queue).outcome(id.value()));
			return Optional.ofNullable(parse(queue, id, fields));
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException("Redis failed to read the outcome of task " + id + " of queue '" + queue
					+ "': " + StoreScripts.reason(ex), id, ex);
		}
	}

	/**
	 * Ask a live task to tell {@code channel} when it ends, and keep its outcome for at
	 * least {@code keep}.
	 * @param queue the queue
	 * @param id the task
	 * @param keep how long to keep the outcome
	 * @param channel the tracker's channel
	 * @return {@code 'L'} live, {@code 'O'} ended with a record, {@code 'N'} neither
	 */
	public char track(String queue, TaskId id, Duration keep, String channel) {
		PartitionKeys keys = this.settings.keys(queue);
		Reply reply = new Reply(
				this.scripts.run(Script.TRACK, List.of(keys.meta(), keys.task(id.value()), keys.outcome(id.value())),
						List.of(Long.toString(Math.max(1, keep.toMillis())), channel), queue, id.value()));
		return reply.code(1);
	}

	@Nullable TaskOutcome parse(String queue, TaskId id, Map<?, ?> fields) {
		TaskOutcome.Kind kind = kind(fields.get("k"));
		if (kind == null) {
			return null;
		}
		return new TaskOutcome(id, queue, kind, (int) TaskRecords.number(fields.get("a")),
				Instant.ofEpochMilli(TaskRecords.number(fields.get("t"))), text(fields.get("rs")),
				text(fields.get("et")), text(fields.get("em")), text(fields.get("r")), this.codec::readResult);
	}

	private static TaskOutcome.@Nullable Kind kind(@Nullable Object code) {
		if (code == null) {
			return null;
		}
		return switch (code.toString()) {
			case "S" -> TaskOutcome.Kind.SUCCEEDED;
			case "D" -> TaskOutcome.Kind.DEAD_LETTERED;
			case "C" -> TaskOutcome.Kind.CANCELLED;
			case "X" -> TaskOutcome.Kind.EXPIRED;
			default -> null;
		};
	}

	private static @Nullable String text(@Nullable Object value) {
		return (value == null || value.toString().isEmpty()) ? null : value.toString();
	}

}

package dev.delayedtasks.internal.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.TaskState;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.PreparedTask;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskRecords;
import dev.delayedtasks.internal.store.script.Reply;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * What a producer does to a task that is stored already, on the blocking connection:
 * cancel it ({@code cancel} script), move its due time ({@code reschedule} script) and
 * read it. Tasks held for a commit are the {@link AfterCommitSends}' to change.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class StoredTasks {

	private final StoreScripts scripts;

	private final StoreSettings settings;

	StoredTasks(StoreScripts scripts, StoreSettings settings) {
		this.scripts = scripts;
		this.settings = settings;
	}

	/**
	 * Cancel a stored task.
	 * @param queue the queue, checked
	 * @param id the task
	 * @return whether it was waiting and is now cancelled
	 */
	boolean cancel(String queue, TaskId id) {
		PartitionKeys keys = this.settings.keys(queue);
		String value = id.value();
		Reply reply = new Reply(this.scripts.run(Script.CANCEL,
				List.of(keys.sched(), keys.stats(), keys.task(value), keys.payload(value), keys.error(value)),
				List.of(keys.base(), value, RedisTaskStore.millis(this.settings.tombstoneTtl())), queue, value));
		return reply.code(1) == 'C';
	}

	/**
	 * Move a stored task's due time.
	 * @param queue the queue, checked
	 * @param id the task
	 * @param delay the new delay, or {@code null} with {@code runAt}
	 * @param runAt the new due instant, or {@code null} with {@code delay}
	 * @return whether it was waiting and is moved
	 */
	boolean reschedule(String queue, TaskId id, @Nullable Duration delay, @Nullable Instant runAt) {
		PartitionKeys keys = this.settings.keys(queue);
		long time = PreparedTask.dueArgument(queue, delay, runAt);
		String value = id.value();
		Reply reply = new Reply(this.scripts.run(Script.RESCHEDULE,
				List.of(keys.sched(), keys.ready(), keys.wake(), keys.tick(), keys.stats(), keys.task(value)),
				List.of(keys.base(), value, (runAt != null) ? "A" : "D", Long.toString(time),
						Integer.toString(this.settings.fanoutBatch())),
				queue, value));
		return reply.code(1) == 'O';
	}

	/**
	 * Read a stored task.
	 * @param queue the queue, checked
	 * @param id the task
	 * @return the task, empty when it does not exist
	 */
	Optional<TaskInfo> find(String queue, TaskId id) {
		PartitionKeys keys = this.settings.keys(queue);
		try {
			Map<Object, Object> fields = this.scripts.template().opsForHash().entries(keys.task(id.value()));
			if (TaskRecords.state(fields.get("s")) == null) {
				return Optional.empty();
			}
			String error = this.scripts.template().opsForValue().get(keys.error(id.value()));
			return Optional.ofNullable(taskInfo(queue, id, fields, error));
		}
		catch (DataAccessException ex) {
			throw readFailure(queue, id, ex);
		}
	}

	static @Nullable TaskInfo taskInfo(String queue, TaskId id, Map<?, ?> fields, @Nullable String error) {
		TaskState state = TaskRecords.state(fields.get("s"));
		if (state == null) {
			return null;
		}
		return new TaskInfo(id, queue, state, (int) TaskRecords.number(fields.get("a")),
				(int) TaskRecords.number(fields.get("v")), (int) TaskRecords.number(fields.get("m")),
				Instant.ofEpochMilli(TaskRecords.number(fields.get("d"))),
				Instant.ofEpochMilli(TaskRecords.number(fields.get("c"))), "1".equals(fields.get("cr")),
				TaskRecords.error(error),
				(fields.get("xa") != null) ? Instant.ofEpochMilli(TaskRecords.number(fields.get("xa"))) : null,
				(int) TaskRecords.number(fields.get("pr")));
	}

	static TaskStoreException readFailure(String queue, TaskId id, Throwable ex) {
		return new TaskStoreException(
				"Redis failed to read task " + id + " of queue '" + queue + "': " + ex.getMessage(), id, ex);
	}

}

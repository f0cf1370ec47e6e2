package dev.delayedtasks.internal.admin;

import java.util.List;
import java.util.function.Function;

import dev.delayedtasks.Names;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.QueueLimits;
import dev.delayedtasks.QueueRemoval;
import dev.delayedtasks.QueueRemoval.Outcome;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.FlowLimits;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisTaskStore;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.script.Reply;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * {@link QueueControl} through the {@code paused} field of each queue's {@code meta}
 * hash, which the claim script reads, and the {@code remove} script with the
 * {@link QueueIndex}.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisQueueControl implements QueueControl {

	private static final Log logger = LogFactory.getLog(RedisQueueControl.class);

	/**
	 * Ready hints the remove script checks for a task that is really ready: a longer
	 * ready list is not empty.
	 */
	private static final int HINT_SCAN = 100;

	private final StoreScripts scripts;

	private final StoreSettings settings;

	private final QueueIndex index;

	private final Function<String, @Nullable String> handlerOfQueue;

	/**
	 * Create a control.
	 * @param scripts the scripts (and the template they run on)
	 * @param settings the settings (for the key prefix)
	 * @param index the index of known queues
	 * @param handlerOfQueue this instance's handler id of a queue, or {@code null} when
	 * it has none
	 */
	public RedisQueueControl(StoreScripts scripts, StoreSettings settings, QueueIndex index,
			Function<String, @Nullable String> handlerOfQueue) {
		this.scripts = scripts;
		this.settings = settings;
		this.index = index;
		this.handlerOfQueue = handlerOfQueue;
	}

	@Override
	public void pause(String queue) {
		redis().opsForHash().put(this.settings.keys(Names.checkQueue(queue)).meta(), "paused", "1");
	}

	@Override
	public void resume(String queue) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		redis().opsForHash().delete(keys.meta(), "paused");
		redis().opsForList().rightPush(keys.wake(), "1");
	}

	@Override
	public boolean isPaused(String queue) {
		return "1".equals(redis().opsForHash().get(this.settings.keys(Names.checkQueue(queue)).meta(), "paused"));
	}

	@Override
	public QueueLimits limits(String queue) {
		Object field = redis().opsForHash().get(this.settings.keys(Names.checkQueue(queue)).meta(), FlowLimits.FIELD);
		return FlowLimits.decode((String) field);
	}

	@Override
	public void setLimits(String queue, QueueLimits limits) {
		PartitionKeys keys = this.settings.keys(Names.checkQueue(queue));
		redis().opsForHash().put(keys.meta(), FlowLimits.FIELD, FlowLimits.encode(limits));
		redis().opsForList().rightPush(keys.wake(), "1");
		logger.info("Queue '" + queue + "': flow control set to " + limits);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The index is one key and a queue's partition another, in different Cluster slots,
	 * so no script can change both. Three steps make removal safe anyway: (1) the
	 * {@code remove} script checks the partition is empty and deletes its keys, its
	 * layout version among them; (2) {@code SREM} takes the queue out of the index; (3)
	 * the layout version is read again. A schedule that writes to the queue after (1)
	 * finds no layout version, so its producer adds the queue to the index after its
	 * write ({@code SADD}, even if its process registered the queue before). If that
	 * write came before (3), step (3) sees the version and adds the queue back itself
	 * (the producer's {@code SADD} may have come before the {@code SREM}); if it came
	 * after, the producer's {@code SADD} comes after the {@code SREM}. A schedule before
	 * (1) makes the partition not empty. Either way the queue of a stored task ends in
	 * the index. What this leaves: a process that crashes between its write and its
	 * {@code SADD} during a removal (or a remover between (2) and (3)) leaves a task
	 * whose queue is not in the index until it is scheduled to again.
	 */
	@Override
	public QueueRemoval remove(String queue) {
		Names.checkQueue(queue);
		String handler = this.handlerOfQueue.apply(queue);
		if (handler != null) {
			return new QueueRemoval(queue, Outcome.HANDLED_HERE, 0, 0, 0, 0, handler);
		}
		PartitionKeys keys = this.settings.keys(queue);
		Reply reply = new Reply(this.scripts.run(Script.REMOVE,
				List.of(keys.sched(), keys.ready(), keys.lease(), keys.dead(), keys.timer(), keys.meta(), keys.stats(),
						keys.tick(), keys.wake(), keys.handover()),
				List.of(keys.base(), Integer.toString(HINT_SCAN)), queue, null));
		return switch (reply.code(1)) {
			case 'N' -> {
				// A queue with tasks belongs in the index, whatever an interrupted
				// removal or a crashed producer left there.
				addBack(queue);
				yield new QueueRemoval(queue, Outcome.NOT_EMPTY, reply.number(2), reply.number(3), reply.number(4),
						reply.number(5), null);
			}
			case 'T' -> new QueueRemoval(queue, Outcome.HANDLED_ELSEWHERE, 0, 0, 0, 0, reply.text(6));
			case 'O' -> removeFromIndex(queue, keys);
			default -> throw RedisTaskStore.unexpected(Script.REMOVE, reply);
		};
	}

	private QueueRemoval removeFromIndex(String queue, PartitionKeys keys) {
		try {
			this.index.remove(queue);
			if (redis().opsForHash().get(keys.meta(), "v") != null) {
				this.index.registerAgain(queue);
				return new QueueRemoval(queue, Outcome.IN_USE, 0, 0, 0, 0, null);
			}
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException("Redis failed to remove queue '" + queue
					+ "' from the index of known queues after deleting its keys; remove it again: "
					+ StoreScripts.reason(ex), null, ex);
		}
		logger.info("Queue '" + queue + "' was removed from the index of known queues");
		return new QueueRemoval(queue, Outcome.REMOVED, 0, 0, 0, 0, null);
	}

	private void addBack(String queue) {
		try {
			this.index.registerAgain(queue);
		}
		catch (DataAccessException ex) {
			throw new TaskStoreException("Redis failed to keep queue '" + queue + "' in the index of known queues: "
					+ StoreScripts.reason(ex), null, ex);
		}
	}

	private StringRedisTemplate redis() {
		return this.scripts.template();
	}

}

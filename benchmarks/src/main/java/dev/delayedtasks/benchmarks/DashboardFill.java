package dev.delayedtasks.benchmarks;

import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntFunction;

import dev.delayedtasks.FailureReason;
import dev.delayedtasks.RecurringSchedule;
import dev.delayedtasks.RecurringTasks;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskRequest;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.ClaimedTask;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisQueueHistory;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.internal.store.TaskStore;
import dev.delayedtasks.internal.store.script.StoreScripts;

import org.springframework.stereotype.Component;

/**
 * Fills Redis for the dashboard workload, through the library: scheduled tasks in
 * {@code scheduleAll} batches (which registers each queue in the queue index), half of
 * them in the first queue and the rest spread evenly over the others, due 10 minutes to 2
 * days ahead; on the first five queues also ready tasks, leased ("running") tasks and
 * dead letters of three reasons and exception types, claimed and failed through the store
 * as a worker would; recurring schedules; and one history sample of the first queue. No
 * handler runs them. Then deletes it all.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Component
class DashboardFill {

	/** Queues with ready, running and dead tasks besides scheduled ones. */
	static final int BUSY_QUEUES = 5;

	static final int READY = 100;

	static final int RUNNING = 20;

	/** Dead letters of the first queue: more than the 200 its page groups. */
	static final int DEAD_FIRST = 250;

	static final int DEAD_OTHERS = 30;

	/** Recurring schedules: more than the schedules page's 50. */
	static final int SCHEDULES = 60;

	/** Scheduled tasks of the first queue whose ids the task view reads. */
	static final int SAMPLE = 50;

	private static final Duration SOONEST = Duration.ofMinutes(10);

	private static final Duration LATEST = Duration.ofDays(2);

	private static final int CLAIM_BATCH = 100;

	private final TaskProducer producer;

	private final TaskStore store;

	private final RecurringTasks recurring;

	private final QueueIndex index;

	private final RedisQueueHistory history;

	private final RedisProbe redis;

	private final long seed;

	DashboardFill(TaskProducer producer, TaskStore store, RecurringTasks recurring, QueueIndex index,
			StoreScripts scripts, StoreSettings settings, RedisProbe redis, BenchmarkProperties properties) {
		this.producer = producer;
		this.store = store;
		this.recurring = recurring;
		this.index = index;
		this.history = new RedisQueueHistory(scripts, settings);
		this.redis = redis;
		this.seed = properties.seed();
	}

	/**
	 * Fill Redis.
	 * @param namePrefix the start of every queue's and schedule's name
	 * @param queues how many queues
	 * @param tasks how many scheduled tasks
	 * @param batch requests per {@code scheduleAll} call
	 * @return what was written
	 */
	DashboardData fill(String namePrefix, int queues, int tasks, int batch) {
		List<String> names = new ArrayList<>(queues);
		for (int q = 0; q < queues; q++) {
			names.add(String.format("%s%04d", namePrefix, q));
		}
		long usedBefore = this.redis.usedMemory();
		long start = System.nanoTime();
		SplittableRandom random = new SplittableRandom(this.seed);
		long span = LATEST.minus(SOONEST).toMillis();
		IntFunction<TaskRequest> scheduled = (i) -> TaskRequest.of(names.get(queueOf(i, queues, tasks)), i)
			.delay(SOONEST.plusMillis(random.nextLong(span)));
		List<TaskId> sample = new ArrayList<>(SAMPLE);
		this.producer.inBatches(tasks, batch, scheduled, (id, micros) -> {
			// The first half of the tasks is the first queue's.
			if (sample.size() < SAMPLE) {
				sample.add(id);
			}
		});
		for (int q = 0; q < Math.min(BUSY_QUEUES, queues); q++) {
			busy(names.get(q), (q == 0) ? DEAD_FIRST : DEAD_OTHERS);
		}
		for (int s = 0; s < SCHEDULES; s++) {
			this.recurring.upsert(RecurringSchedule.cron(scheduleId(namePrefix, s), names.get(s % queues),
					"0 " + (s % 60) + " 3 * * *"));
		}
		this.history.record(names.get(0));
		long millis = (System.nanoTime() - start) / 1_000_000;
		return new DashboardData(namePrefix, names, sample.stream().map(TaskId::value).toList(), tasks, millis,
				this.redis.usedMemory() - usedBefore);
	}

	/**
	 * Delete everything {@link #fill} wrote, and the queues' names from the index.
	 * @param data what was written
	 */
	void clear(DashboardData data) {
		for (int s = 0; s < SCHEDULES; s++) {
			this.recurring.remove(scheduleId(data.namePrefix(), s));
		}
		this.redis.deleteQueuesNamed(data.namePrefix());
		data.queues().forEach(this.index::remove);
	}

	// The queue of scheduled task i: the first half in the first queue, the rest in even
	// runs over the others, so that a batch of requests is mostly one queue's.
	private static int queueOf(int i, int queues, int tasks) {
		int half = tasks / 2;
		if (queues == 1 || i < half) {
			return 0;
		}
		return 1 + (int) ((long) (i - half) * (queues - 1) / (tasks - half));
	}

	// Ready tasks, some leased and never acknowledged (running), some failed into dead
	// letters.
	private void busy(String queue, int dead) {
		this.producer.inBatches(READY + RUNNING + dead, 1000, (i) -> TaskRequest.of(queue, i), EnqueueSink.NONE);
		List<ClaimedTask> failing = claim(queue, dead);
		for (int i = 0; i < failing.size(); i++) {
			this.store.fail(queue, failing.get(i).lease(), failure(i));
		}
		claim(queue, RUNNING);
	}

	private List<ClaimedTask> claim(String queue, int count) {
		List<ClaimedTask> claimed = new ArrayList<>(count);
		while (claimed.size() < count) {
			ClaimBatch batch = this.store.claim(queue, Math.min(CLAIM_BATCH, count - claimed.size()),
					"bench-dashboard." + queue + "." + claimed.size());
			if (batch.tasks().isEmpty()) {
				throw new IllegalStateException("Queue '" + queue + "': only " + claimed.size() + " of " + count
						+ " ready tasks could be claimed");
			}
			claimed.addAll(batch.tasks());
		}
		return claimed;
	}

	// Three kinds of failure, in turn, each with the stack trace of a real exception.
	private static TaskFailure failure(int i) {
		return switch (i % 3) {
			case 0 -> TaskFailure.of(null, FailureReason.NON_RETRYABLE,
					new IllegalArgumentException("Order " + i + " has no customer"));
			case 1 -> TaskFailure.of(null, FailureReason.RETRIES_EXHAUSTED,
					new UncheckedIOException("Mail server unreachable", new ConnectException("Connection refused")));
			default -> TaskFailure.of(null, FailureReason.UNREADABLE_PAYLOAD,
					new IllegalStateException("Cannot read the payload of task " + i));
		};
	}

	private static String scheduleId(String namePrefix, int s) {
		return namePrefix + "report-" + s;
	}

	/**
	 * What a fill wrote.
	 *
	 * @param namePrefix the start of its queues' and schedules' names
	 * @param queues the queues, the first holding half of the scheduled tasks
	 * @param taskIds ids of scheduled tasks of the first queue
	 * @param tasks scheduled tasks in all
	 * @param millis how long the fill took
	 * @param usedBytes {@code used_memory} it added
	 */
	record DashboardData(String namePrefix, List<String> queues, List<String> taskIds, int tasks, long millis,
			long usedBytes) {

		String first() {
			return this.queues.get(0);
		}

	}

}

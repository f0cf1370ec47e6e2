package dev.delayedtasks.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

import dev.delayedtasks.DeadLetter;
import dev.delayedtasks.DeadLetters;
import dev.delayedtasks.DelayedTaskScheduler;
import dev.delayedtasks.QueueControl;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskInfo;
import dev.delayedtasks.internal.testing.PrefixKeys;
import dev.delayedtasks.internal.testing.RunHistory;
import dev.delayedtasks.testing.TaskRun.Outcome;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.Assert;

/**
 * Drives and observes delayed-tasks in a test: waits until queues are idle or a task has
 * completed, lists the runs of this test and the dead letters, moves the queues' clocks
 * forward, and pauses the workers to run due tasks step by step. Everything goes through
 * the application's real Redis, scripts, timer and workers.
 * <p>
 * A bean of every context set up by {@link AutoConfigureDelayedTasks}. After each test
 * method the context's keys, its clock offsets and the recorded runs are
 * {@linkplain #clear() cleared}.
 * <p>
 * <b>Time.</b> {@link #advanceTime(Duration)} adds to a test clock offset that every
 * script of the queue adds to Redis {@code TIME}, and wakes the queue's timer, so a task
 * due in an hour runs at once, through the same scripts and timer as in production.
 * Leases of running handlers move along, so advanced time never makes a running task
 * expire. Things Redis itself times (the {@code uniqueFor} window, the cancel tombstone)
 * keep real time. An application refuses to start on a queue whose clock a test moved.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class DelayedTasksTester {

	/** How long {@link #awaitCompleted(String, TaskId)} and {@link #runDue()} wait. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

	private static final long POLL_MILLIS = 5;

	/** How long a run may stay open once Redis has no task in flight: its listener. */
	private static final long OUTCOME_GRACE_MILLIS = 500;

	private final StringRedisTemplate redis;

	private final String keyPrefix;

	private final QueueControl control;

	private final DeadLetters deadLetters;

	private final DelayedTaskScheduler scheduler;

	private final RunHistory history;

	private final Supplier<Collection<String>> handlerQueues;

	private final PrefixKeys keys;

	private final QueueClock clock;

	private final Runnable afterClear;

	private volatile boolean paused;

	/**
	 * Create a tester; {@link AutoConfigureDelayedTasks} does, applications need not.
	 * @param connectionFactory the application's Redis connection factory
	 * @param keyPrefix the key prefix of the application's delayed-tasks keys
	 * @param control pauses and resumes queues
	 * @param deadLetters the dead letters
	 * @param scheduler the scheduler (to describe a task that has not run)
	 * @param history the run history, a listener of the application's tasks
	 * @param handlerQueues the queues of the context's handlers
	 */
	public DelayedTasksTester(RedisConnectionFactory connectionFactory, String keyPrefix, QueueControl control,
			DeadLetters deadLetters, DelayedTaskScheduler scheduler, RunHistory history,
			Supplier<Collection<String>> handlerQueues) {
		this(connectionFactory, keyPrefix, control, deadLetters, scheduler, history, handlerQueues, () -> {
		});
	}

	/**
	 * Create a tester; {@link AutoConfigureDelayedTasks} does, applications need not.
	 * @param connectionFactory the application's Redis connection factory
	 * @param keyPrefix the key prefix of the application's delayed-tasks keys
	 * @param control pauses and resumes queues
	 * @param deadLetters the dead letters
	 * @param scheduler the scheduler (to describe a task that has not run)
	 * @param history the run history, a listener of the application's tasks
	 * @param handlerQueues the queues of the context's handlers
	 * @param afterClear what {@link #clear()} does once the keys are gone: register the
	 * application's declared recurring schedules again
	 */
	public DelayedTasksTester(RedisConnectionFactory connectionFactory, String keyPrefix, QueueControl control,
			DeadLetters deadLetters, DelayedTaskScheduler scheduler, RunHistory history,
			Supplier<Collection<String>> handlerQueues, Runnable afterClear) {
		this.afterClear = afterClear;
		this.redis = new StringRedisTemplate(connectionFactory);
		this.keyPrefix = keyPrefix;
		this.control = control;
		this.deadLetters = deadLetters;
		this.scheduler = scheduler;
		this.history = history;
		this.handlerQueues = handlerQueues;
		this.keys = new PrefixKeys(connectionFactory, keyPrefix);
		this.clock = new QueueClock(this.redis, keyPrefix);
	}

	/**
	 * The key prefix of this context's delayed-tasks keys ({@code dtt-<random>}).
	 * @return the prefix
	 */
	public String keyPrefix() {
		return this.keyPrefix;
	}

	/**
	 * The queues this tester acts on when none is named: those of the context's handlers,
	 * those scheduled into since the context started, and those in the key prefix's queue
	 * index.
	 * @return the queue names, sorted
	 */
	public Set<String> queues() {
		Set<String> queues = new TreeSet<>(this.handlerQueues.get());
		queues.addAll(this.history.queues());
		Set<String> indexed = this.redis.opsForSet().members(this.keyPrefix + ":queues");
		if (indexed != null) {
			queues.addAll(indexed);
		}
		return queues;
	}

	/**
	 * Move the clock of every {@linkplain #queues() known queue} forward, and wake their
	 * timers: tasks that are due by then run now. A queue first used after this call
	 * starts from the real Redis time.
	 * @param amount how far, at least a millisecond
	 */
	public void advanceTime(Duration amount) {
		for (String queue : queues()) {
			advanceTime(queue, amount);
		}
	}

	/**
	 * Move one queue's clock forward and wake its timer: its tasks that are due by then
	 * run now.
	 * @param queue the queue
	 * @param amount how far, at least a millisecond
	 * @return the queue's time after the move
	 */
	public Instant advanceTime(String queue, Duration amount) {
		Assert.notNull(amount, "amount must not be null");
		Assert.isTrue(amount.toMillis() >= 1, () -> "amount is " + amount + ": time moves by 1 ms or more");
		return this.clock.advance(queue, amount);
	}

	/**
	 * The queue's clock: Redis time plus what tests advanced it by.
	 * @param queue the queue
	 * @return the queue's time now
	 */
	public Instant now(String queue) {
		return Instant.ofEpochMilli(this.clock.state(queue).now());
	}

	/**
	 * Wait until every {@linkplain #queues() known queue} is idle.
	 * @param timeout how long to wait in all
	 * @see #awaitIdle(String, Duration)
	 */
	public void awaitIdle(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		for (String queue : queues()) {
			awaitIdle(queue, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
		}
	}

	/**
	 * Wait until the queue is idle: no task is due (on the queue's clock) and not yet
	 * run, none is ready, none is running, and every run has its outcome recorded. Tasks
	 * due later (a retry's back-off, a delay) do not count: {@link #advanceTime} them.
	 * @param queue the queue
	 * @param timeout how long to wait
	 * @throws AssertionError when the queue is still busy after the timeout, saying with
	 * what
	 * @throws IllegalStateException when the queue is paused with due work (see
	 * {@link #pauseWorkers()}), which would never end
	 */
	public void awaitIdle(String queue, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		long quietSince = -1;
		while (true) {
			QueueState state = this.clock.state(queue);
			boolean running = this.history.isRunning(queue);
			if (state.isIdle()) {
				if (!running) {
					return;
				}
				// Redis has nothing in flight: the outcome's listener is on its way, or
				// the run ended in a way no listener hears (cancelled, cleared).
				long now = System.nanoTime();
				quietSince = (quietSince < 0) ? now : quietSince;
				if (now - quietSince > OUTCOME_GRACE_MILLIS * 1_000_000) {
					this.history.endUnrecorded(queue);
					return;
				}
			}
			else {
				quietSince = -1;
				if (state.paused() && state.leased() == 0 && !running) {
					throw new IllegalStateException("Queue '" + queue + "' is paused (pauseWorkers()) and has "
							+ state.describe() + ": call runDue() or resumeWorkers()");
				}
			}
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("Queue '" + queue + "' is not idle after " + timeout + ": it has "
						+ state.describe() + ((running) ? ", and a run without a recorded outcome" : ""));
			}
			sleep();
		}
	}

	/**
	 * Wait up to {@link #DEFAULT_TIMEOUT} until a run of the task succeeds.
	 * @param queue the queue
	 * @param id the task
	 * @return the successful run
	 * @see #awaitCompleted(String, TaskId, Duration)
	 */
	public TaskRun awaitCompleted(String queue, TaskId id) {
		return awaitCompleted(queue, id, DEFAULT_TIMEOUT);
	}

	/**
	 * Wait until a run of the task succeeds, in this test.
	 * @param queue the queue
	 * @param id the task
	 * @param timeout how long to wait
	 * @return the successful run
	 * @throws AssertionError when the task is dead-lettered, or has not succeeded after
	 * the timeout: the message says where it is (scheduled for later on the queue's
	 * clock, a retry due later, still running)
	 */
	public TaskRun awaitCompleted(String queue, TaskId id, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			List<TaskRun> runs = runs(queue, id);
			for (TaskRun run : runs) {
				if (run.outcome() == Outcome.SUCCEEDED) {
					return run;
				}
				if (run.outcome() == Outcome.DEAD_LETTERED) {
					throw new AssertionError("Task " + id + " of queue '" + queue + "' was dead-lettered ("
							+ run.deadLetterReason() + ") after attempt " + run.attempt() + ": " + run.failure(),
							run.failure());
				}
			}
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("Task " + id + " of queue '" + queue + "' has not completed after " + timeout
						+ ": " + whereIs(queue, id, runs));
			}
			sleep();
		}
	}

	private String whereIs(String queue, TaskId id, List<TaskRun> runs) {
		Instant now = now(queue);
		@Nullable TaskRun last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
		if (last != null && last.outcome() == Outcome.RETRIED && last.nextRunAt() != null) {
			return "its run " + last.attempt() + " failed (" + last.failure() + ") and it runs again at "
					+ last.nextRunAt() + ", " + Duration.between(now, last.nextRunAt())
					+ " ahead of the queue's clock: advanceTime(...) to run it now";
		}
		if (last != null && last.outcome() == Outcome.RUNNING) {
			return "its run " + last.attempt() + " is still running";
		}
		Optional<TaskInfo> info = this.scheduler.find(queue, id);
		if (info.isEmpty()) {
			return "no such task in Redis under key prefix '" + this.keyPrefix + "'"
					+ ((last != null) ? " (its last run here: " + last + ")" : "");
		}
		TaskInfo task = info.get();
		return "it is " + task.state() + ", due at " + task.dueAt()
				+ (task.dueAt().isAfter(now) ? ", " + Duration.between(now, task.dueAt())
						+ " ahead of the queue's clock: advanceTime(...) to run it now" : "")
				+ ((this.paused) ? "; the workers are paused: runDue() runs it" : "");
	}

	/**
	 * Every run recorded in this test, in the order they started.
	 * @return the runs
	 */
	public List<TaskRun> runs() {
		return this.history.runs();
	}

	/**
	 * The runs of one queue recorded in this test.
	 * @param queue the queue
	 * @return the runs, in the order they started
	 */
	public List<TaskRun> runs(String queue) {
		return runs().stream().filter((run) -> run.queue().equals(queue)).toList();
	}

	/**
	 * The runs of one task recorded in this test.
	 * @param queue the queue
	 * @param id the task
	 * @return its runs, first attempt first
	 */
	public List<TaskRun> runs(String queue, TaskId id) {
		return runs().stream().filter((run) -> run.queue().equals(queue) && run.id().equals(id)).toList();
	}

	/**
	 * The queue's dead letters, newest first.
	 * @param queue the queue
	 * @return up to 1,000 dead letters
	 */
	public List<DeadLetter> deadLetters(String queue) {
		return this.deadLetters.list(queue, 1000);
	}

	/**
	 * Pause every {@linkplain #queues() known queue}: due tasks become ready but no
	 * worker claims them until {@link #runDue()} or {@link #resumeWorkers()}.
	 */
	public void pauseWorkers() {
		this.paused = true;
		queues().forEach(this.control::pause);
	}

	/**
	 * Resume every {@linkplain #queues() known queue}.
	 */
	public void resumeWorkers() {
		this.paused = false;
		queues().forEach(this.control::resume);
	}

	/**
	 * Run what is due on every {@linkplain #queues() known queue} now, and wait until it
	 * has run: each queue is resumed until it is {@linkplain #awaitIdle(String, Duration)
	 * idle}, then paused again if {@link #pauseWorkers()} had paused it. Retries whose
	 * back-off has not passed on the queue's clock wait for the next call.
	 * @return the runs that started during this call
	 */
	public List<TaskRun> runDue() {
		int before = this.history.runs().size();
		long deadline = System.nanoTime() + DEFAULT_TIMEOUT.toNanos();
		for (String queue : queues()) {
			boolean wasPaused = this.control.isPaused(queue);
			if (wasPaused) {
				this.control.resume(queue);
			}
			try {
				awaitIdle(queue, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
			}
			finally {
				if (wasPaused || this.paused) {
					this.control.pause(queue);
				}
			}
		}
		List<TaskRun> runs = this.history.runs();
		return runs.subList(Math.min(before, runs.size()), runs.size());
	}

	/**
	 * Start afresh: delete every task, dead letter, counter, pause flag and clock offset
	 * under the key prefix, and forget the recorded runs; then register the recurring
	 * schedules the application declares again, as its startup did. Runs after each test
	 * method; a handler still running then completes into nothing.
	 */
	public void clear() {
		this.keys.delete(true);
		this.history.clear();
		this.paused = false;
		this.afterClear.run();
	}

	private static void sleep() {
		try {
			Thread.sleep(POLL_MILLIS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for delayed tasks", ex);
		}
	}

}

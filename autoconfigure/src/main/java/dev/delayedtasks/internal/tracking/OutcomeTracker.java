package dev.delayedtasks.internal.tracking;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import dev.delayedtasks.TaskId;
import dev.delayedtasks.TaskOutcome;
import dev.delayedtasks.TaskStoreException;
import dev.delayedtasks.internal.store.StoreSettings;
import dev.delayedtasks.internal.store.codec.PayloadCodec;
import dev.delayedtasks.internal.store.script.StoreScripts;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.SubscriptionListener;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Completes, in this process, the futures of the tasks it tracks when any instance ends
 * them. The ending script writes the outcome record and publishes its key on this
 * process's channel ({@code <prefix>:tracker:<id>}, named in the task's hash); the
 * tracker reads the record and completes the future. Pub/Sub alone would lose what is
 * published while the connection is down, so every (re)subscription reads the records of
 * all tasks still awaited: the record, kept in Redis for the tracked retention, is what
 * counts, the message only says when to read it. Nothing is subscribed until the first
 * task is tracked, and a process that dies leaves nothing behind but records that expire.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class OutcomeTracker implements DisposableBean {

	private static final Log logger = LogFactory.getLog(OutcomeTracker.class);

	/**
	 * Records read at once: each reader waits for its reply while the others' reads share
	 * the connection, so a burst of ends is not read one round trip after another.
	 */
	private static final int READERS = 4;

	private final RedisConnectionFactory connectionFactory;

	private final OutcomeRecords records;

	private final StoreSettings settings;

	private final Duration maxWait;

	private final String channel;

	private final Map<String, Awaited> awaited = new ConcurrentHashMap<>();

	private final Listener listener = new Listener();

	/**
	 * Reads records and completes futures, up to {@value #READERS} at once; its threads
	 * end after a minute without work. Its queue is unbounded, so handing it work never
	 * blocks: the container hands over messages and subscription events on a Lettuce
	 * event-loop thread, which must never wait for Redis (the reply it would wait for may
	 * be due on that same thread).
	 */
	private final ThreadPoolExecutor worker = readers();

	/**
	 * Fails the futures of tasks not ended within the longest wait. A timeout is removed
	 * from its queue when cancelled, so memory follows the tasks still awaited.
	 */
	private final ScheduledThreadPoolExecutor timeouts = timeoutScheduler();

	private @Nullable RedisMessageListenerContainer container;

	private boolean destroyed;

	/**
	 * Create a tracker.
	 * @param connectionFactory the connection factory, for the subscription
	 * @param scripts the scripts
	 * @param settings the key layout
	 * @param codec reads results
	 * @param maxWait how long a task is awaited at most (the tracked retention)
	 */
	public OutcomeTracker(RedisConnectionFactory connectionFactory, StoreScripts scripts, StoreSettings settings,
			PayloadCodec codec, Duration maxWait) {
		this.connectionFactory = connectionFactory;
		this.records = new OutcomeRecords(scripts, settings, codec);
		this.settings = settings;
		this.maxWait = maxWait;
		this.channel = settings.keyPrefix() + ":tracker:" + UUID.randomUUID();
	}

	/**
	 * The channel this process hears outcomes on.
	 * @return the channel
	 */
	public String channel() {
		return this.channel;
	}

	/**
	 * How long tasks are awaited at most.
	 * @return the tracked retention
	 */
	public Duration maxWait() {
		return this.maxWait;
	}

	/**
	 * Await a task's outcome: subscribed before the task can end, so no outcome is
	 * missed. Each call has a future of its own; completing or cancelling it ends that
	 * caller's wait only. A task is awaited until its outcome arrives or, since the last
	 * call, the longest wait is over.
	 * @param queue the queue
	 * @param id the task
	 * @return completes with the outcome, or fails after the longest wait
	 */
	public CompletableFuture<TaskOutcome> expect(String queue, TaskId id) {
		return expect(queue, id, this.maxWait);
	}

	/**
	 * Await a task's outcome for at least {@code wait}, or the longest wait if that is
	 * longer.
	 * @param queue the queue
	 * @param id the task
	 * @param wait how long this caller means to wait
	 * @return completes with the outcome, or fails when no outcome came in time
	 */
	public CompletableFuture<TaskOutcome> expect(String queue, TaskId id, Duration wait) {
		return register(queue, id, wait, true);
	}

	/**
	 * Await the outcome of a task about to be created, which a record kept from an
	 * earlier task with its id must not complete: the caller's future hears no outcome
	 * until {@link #arm armed}, once the task exists (the enqueue that created it removed
	 * any earlier record). Other callers of the id hear outcomes meanwhile.
	 * @param queue the queue
	 * @param id the task
	 * @return completes with the outcome, or fails after the longest wait
	 */
	public CompletableFuture<TaskOutcome> expectNew(String queue, TaskId id) {
		return register(queue, id, this.maxWait, false);
	}

	/**
	 * Let a future of {@link #expectNew} hear the task's outcome, now that the task
	 * exists; an outcome read while it could not hear it is read again.
	 * @param queue the queue
	 * @param id the task
	 * @param waiter the future
	 */
	public void arm(String queue, TaskId id, CompletableFuture<TaskOutcome> waiter) {
		Awaited entry = this.awaited.get(this.settings.keys(queue).outcome(id.value()));
		if (entry != null && entry.arm(waiter)) {
			// Read again on a reader: never a round trip on the caller's thread.
			readLater(queue, id);
		}
	}

	private CompletableFuture<TaskOutcome> register(String queue, TaskId id, Duration wait, boolean armed) {
		Duration longest = (wait.compareTo(this.maxWait) > 0) ? wait : this.maxWait;
		subscribe();
		String key = this.settings.keys(queue).outcome(id.value());
		CompletableFuture<TaskOutcome> waiter = new CompletableFuture<>();
		this.awaited.compute(key, (k, entry) -> {
			if (entry != null && entry.add(waiter, longest, armed)) {
				return entry;
			}
			// None, or one that closed a moment ago (its outcome arrived, or it expired).
			Awaited created = new Awaited(queue, id, k);
			created.add(waiter, longest, armed);
			return created;
		});
		return waiter;
	}

	/**
	 * Read a task's outcome record now, and complete its future when there is one.
	 * @param queue the queue
	 * @param id the task
	 * @return the outcome, if recorded
	 */
	public Optional<TaskOutcome> check(String queue, TaskId id) {
		Optional<TaskOutcome> outcome = this.records.read(queue, id);
		outcome.ifPresent((ended) -> complete(this.settings.keys(queue).outcome(id.value()), ended));
		return outcome;
	}

	private void readLater(String queue, TaskId id) {
		try {
			this.worker.execute(() -> {
				try {
					check(queue, id);
				}
				catch (RuntimeException ex) {
					logger.warn("Could not read the outcome of task " + id + " of queue '" + queue + "': "
							+ ex.getMessage());
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// stopped
		}
	}

	private void complete(String key, TaskOutcome outcome) {
		Awaited entry = this.awaited.get(key);
		if (entry != null) {
			entry.complete(outcome);
		}
	}

	private static ThreadPoolExecutor readers() {
		ThreadPoolExecutor readers = new ThreadPoolExecutor(READERS, READERS, 1, TimeUnit.MINUTES,
				new LinkedBlockingQueue<>(), daemonThreads());
		readers.allowCoreThreadTimeOut(true);
		return readers;
	}

	private static CustomizableThreadFactory daemonThreads() {
		CustomizableThreadFactory threads = new CustomizableThreadFactory("delayed-tasks-tracker-");
		threads.setDaemon(true);
		return threads;
	}

	private static ScheduledThreadPoolExecutor timeoutScheduler() {
		CustomizableThreadFactory threads = new CustomizableThreadFactory("delayed-tasks-tracker-timeout-");
		threads.setDaemon(true);
		ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, threads);
		scheduler.setRemoveOnCancelPolicy(true);
		return scheduler;
	}

	private synchronized void subscribe() {
		if (this.container != null) {
			return;
		}
		if (this.destroyed) {
			throw new IllegalStateException("The outcome tracker is stopped");
		}
		RedisMessageListenerContainer created = new RedisMessageListenerContainer();
		created.setConnectionFactory(this.connectionFactory);
		created.setTaskExecutor(this.worker);
		created.addMessageListener(this.listener, new ChannelTopic(this.channel));
		created.afterPropertiesSet();
		created.start();
		this.container = created;
	}

	@Override
	public synchronized void destroy() throws Exception {
		this.destroyed = true;
		RedisMessageListenerContainer subscribed = this.container;
		this.container = null;
		if (subscribed != null) {
			subscribed.destroy();
		}
		this.worker.shutdownNow();
		this.timeouts.shutdownNow();
		for (Awaited entry : List.copyOf(this.awaited.values())) {
			entry.fail(new TaskStoreException(
					"The application stopped before task " + entry.id + " of queue '" + entry.queue + "' ended",
					entry.id, null));
		}
	}

	/** Hears the outcome keys, and reads every awaited record after each subscription. */
	private final class Listener implements MessageListener, SubscriptionListener {

		@Override
		public void onMessage(Message message, byte @Nullable [] pattern) {
			String key = new String(message.getBody(), StandardCharsets.UTF_8);
			Awaited entry = OutcomeTracker.this.awaited.get(key);
			if (entry == null) {
				return;
			}
			try {
				OutcomeTracker.this.check(entry.queue, entry.id);
			}
			catch (RuntimeException ex) {
				// The next subscription reads it again; until then, the future waits.
				logger.warn("Could not read the outcome of task " + entry.id + " of queue '" + entry.queue + "': "
						+ ex.getMessage());
			}
		}

		@Override
		public void onChannelSubscribed(byte[] channel, long count) {
			// Called on an event-loop thread: the reads run on the worker.
			try {
				OutcomeTracker.this.worker.execute(this::checkAll);
			}
			catch (RejectedExecutionException ex) {
				// stopped
			}
		}

		private void checkAll() {
			// Anything published while this process was not subscribed is in the records.
			// One record that cannot be read (bad data, a failing node) must not keep the
			// others from being read.
			for (Awaited entry : List.copyOf(OutcomeTracker.this.awaited.values())) {
				try {
					OutcomeTracker.this.check(entry.queue, entry.id);
				}
				catch (RuntimeException ex) {
					logger.warn("Could not read the outcome of task " + entry.id + " of queue '" + entry.queue + "': "
							+ ex.getMessage());
				}
			}
		}

	}

	/**
	 * The waits for one task in this process: the callers' futures, completed together
	 * when its outcome arrives, and the one timeout, pushed back by every new caller.
	 */
	private final class Awaited {

		private final String queue;

		private final TaskId id;

		private final String key;

		private final List<CompletableFuture<TaskOutcome>> waiters = new ArrayList<>();

		/** Callers whose task is not created yet: no outcome is theirs so far. */
		private final Set<CompletableFuture<TaskOutcome>> unarmed = new HashSet<>();

		/** An outcome was read while some caller could not hear it. */
		private boolean passedUnarmed;

		private @Nullable ScheduledFuture<?> timeout;

		/** When the timeout fires, in {@link System#nanoTime()}. */
		private long deadline;

		private boolean closed;

		Awaited(String queue, TaskId id, String key) {
			this.queue = queue;
			this.id = id;
			this.key = key;
		}

		/**
		 * Add a caller, and wait for the task at least {@code wait} from now.
		 * @param waiter the caller's future
		 * @param wait how long the caller waits
		 * @param armed whether the caller hears outcomes at once
		 * @return whether it was added: false when this entry is closed
		 */
		synchronized boolean add(CompletableFuture<TaskOutcome> waiter, Duration wait, boolean armed) {
			if (this.closed) {
				return false;
			}
			this.waiters.add(waiter);
			if (!armed) {
				this.unarmed.add(waiter);
			}
			long deadline = System.nanoTime() + wait.toNanos();
			if (this.timeout == null || deadline - this.deadline > 0) {
				if (this.timeout != null) {
					this.timeout.cancel(false);
				}
				this.deadline = deadline;
				this.timeout = OutcomeTracker.this.timeouts.schedule(this::expire, wait.toNanos(),
						TimeUnit.NANOSECONDS);
			}
			// A caller that stops waiting (its own failure, a cancel) leaves; the last
			// one to
			// leave releases the entry and its timeout.
			waiter.whenComplete((outcome, ex) -> leave(waiter));
			return true;
		}

		/**
		 * Let a caller hear outcomes.
		 * @param waiter the caller's future
		 * @return whether an outcome was read while it could not hear it
		 */
		synchronized boolean arm(CompletableFuture<TaskOutcome> waiter) {
			return this.unarmed.remove(waiter) && this.passedUnarmed;
		}

		void complete(TaskOutcome outcome) {
			List<CompletableFuture<TaskOutcome>> told = null;
			synchronized (this) {
				if (!this.closed && !this.unarmed.isEmpty()) {
					// The callers of a task not created yet stay: it is another task's
					// outcome.
					told = new ArrayList<>(this.waiters);
					told.removeAll(this.unarmed);
					this.waiters.removeAll(told);
					this.passedUnarmed = true;
				}
			}
			for (CompletableFuture<TaskOutcome> waiter : (told != null) ? told : close()) {
				waiter.complete(outcome);
			}
		}

		void fail(Throwable failure) {
			for (CompletableFuture<TaskOutcome> waiter : close()) {
				waiter.completeExceptionally(failure);
			}
		}

		private void expire() {
			fail(new TaskStoreException("No outcome of task " + this.id + " of queue '" + this.queue
					+ "' within the longest wait (delayed-tasks.results.tracked-retention, "
					+ OutcomeTracker.this.maxWait + ", or a longer awaitOutcome timeout)", this.id, null));
		}

		private void leave(CompletableFuture<TaskOutcome> waiter) {
			boolean last;
			synchronized (this) {
				this.unarmed.remove(waiter);
				last = this.waiters.remove(waiter) && this.waiters.isEmpty() && !this.closed;
			}
			if (last) {
				close();
			}
		}

		/**
		 * Stop awaiting the task: no caller joins this entry any more.
		 * @return the callers still waiting
		 */
		private List<CompletableFuture<TaskOutcome>> close() {
			List<CompletableFuture<TaskOutcome>> open;
			synchronized (this) {
				if (this.closed) {
					return List.of();
				}
				this.closed = true;
				if (this.timeout != null) {
					this.timeout.cancel(false);
				}
				open = List.copyOf(this.waiters);
				this.waiters.clear();
			}
			OutcomeTracker.this.awaited.remove(this.key, this);
			return open;
		}

	}

}

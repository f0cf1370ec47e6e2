package dev.delayedtasks.internal.admin;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.delayedtasks.DelayedTaskListener;
import dev.delayedtasks.FailureReason;
import dev.delayedtasks.InvalidTaskRequestException;
import dev.delayedtasks.QueueRemoval;
import dev.delayedtasks.QueueRemoval.Outcome;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.internal.producer.RedisDelayedTaskScheduler;
import dev.delayedtasks.internal.store.ClaimBatch;
import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.QueueIndex;
import dev.delayedtasks.internal.store.RedisQueueHistory;
import dev.delayedtasks.internal.store.StoreFixture;
import dev.delayedtasks.internal.store.TaskFailure;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Removing a queue from the index of known queues ({@link RedisQueueControl#remove}):
 * only an empty queue that no handler runs for, its leftover keys with it, and never so
 * that a task scheduled at the same time ends up in a queue the index does not know.
 */
@WithRedis
class QueueRemovalIntegrationTests {

	private StoreFixture fixture;

	@BeforeEach
	void setUp(TestRedis redis) {
		this.fixture = new StoreFixture(redis);
	}

	@AfterEach
	void tearDown() {
		this.fixture.close();
	}

	@Test
	void anEmptyQueueLeavesTheIndexWithItsLeftoverKeys() {
		String queue = "rm-empty";
		TaskId id = this.fixture.scheduler.enqueue(queue, "job");
		ClaimBatch batch = this.fixture.store.claim(queue, 1, "n1");
		this.fixture.store.ack(queue, List.of(batch.tasks().get(0).lease()));
		assertThat(this.fixture.queues.contains(queue)).isTrue();
		PartitionKeys keys = this.fixture.keys(queue);
		assertThat(this.fixture.redis.hasKey(keys.stats())).isTrue();
		assertThat(this.fixture.redis.hasKey(keys.meta())).isTrue();
		new RedisQueueHistory(this.fixture.scripts, this.fixture.settings).record(queue);
		assertThat(this.fixture.redis.hasKey(keys.minutes())).isTrue();
		assertThat(this.fixture.redis.hasKey(keys.hours())).isTrue();
		assertThat(id).isNotNull();

		QueueRemoval removal = this.fixture.control.remove(queue);

		assertThat(removal.removed()).isTrue();
		assertThat(removal.message()).isEqualTo("Queue 'rm-empty' was removed from the index of known queues");
		assertThat(this.fixture.queues.contains(queue)).isFalse();
		assertThat(this.fixture.queues.queues()).doesNotContain(queue);
		assertThat(this.fixture.redis.keys(keys.base() + "*")).isEmpty();
	}

	@Test
	void aQueueWithTasksInAnyStateIsRefusedWithItsCountsAndKeepsEverything() {
		String queue = "rm-busy";
		this.fixture.scheduler.schedule(queue, "later", Duration.ofHours(1));
		this.fixture.scheduler.enqueue(queue, "ready");
		this.fixture.scheduler.enqueue(queue, "active");
		this.fixture.scheduler.enqueue(queue, "dead");
		ClaimBatch batch = this.fixture.store.claim(queue, 2, "n1");
		this.fixture.store.fail(queue, batch.tasks().get(1).lease(),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, "java.lang.IllegalStateException", "boom"));
		Set<String> before = this.fixture.redis.keys(this.fixture.keys(queue).base() + "*");

		QueueRemoval removal = this.fixture.control.remove(queue);

		assertThat(removal.outcome()).isEqualTo(Outcome.NOT_EMPTY);
		assertThat(List.of(removal.scheduled(), removal.ready(), removal.active(), removal.dead())).containsExactly(1L,
				1L, 1L, 1L);
		assertThat(removal.message()).isEqualTo("Queue 'rm-busy' was not removed: it is not empty (scheduled 1, "
				+ "ready 1, active 1, dead 1); let its tasks run or cancel them, and redrive or purge its dead letters");
		assertThat(this.fixture.queues.contains(queue)).isTrue();
		assertThat(this.fixture.redis.keys(this.fixture.keys(queue).base() + "*")).isEqualTo(before);
	}

	@Test
	void eachStateAloneMakesAQueueNotEmpty() {
		String scheduled = "rm-only-scheduled";
		this.fixture.scheduler.schedule(scheduled, "later", Duration.ofHours(1));
		assertThat(this.fixture.control.remove(scheduled).scheduled()).isEqualTo(1);
		String ready = "rm-only-ready";
		this.fixture.scheduler.enqueue(ready, "now");
		assertThat(this.fixture.control.remove(ready).ready()).isEqualTo(1);
		String active = "rm-only-active";
		this.fixture.scheduler.enqueue(active, "now");
		this.fixture.store.claim(active, 1, "n1");
		assertThat(this.fixture.control.remove(active).active()).isEqualTo(1);
		String dead = "rm-only-dead";
		this.fixture.scheduler.enqueue(dead, "now");
		this.fixture.store.fail(dead, this.fixture.store.claim(dead, 1, "n2").tasks().get(0).lease(),
				new TaskFailure(null, FailureReason.NON_RETRYABLE, "E", "boom"));
		assertThat(this.fixture.control.remove(dead).dead()).isEqualTo(1);
		for (String queue : List.of(scheduled, ready, active, dead)) {
			assertThat(this.fixture.queues.contains(queue)).as(queue).isTrue();
		}
	}

	@Test
	void staleReadyHintsOfCancelledTasksDoNotKeepAQueue() {
		String queue = "rm-stale-hints";
		TaskId id = this.fixture.scheduler.enqueue(queue, "job");
		assertThat(this.fixture.scheduler.cancel(queue, id)).isTrue();
		assertThat(this.fixture.redis.opsForList().size(this.fixture.keys(queue).ready())).isEqualTo(1);

		assertThat(this.fixture.control.remove(queue).removed()).isTrue();
		assertThat(this.fixture.redis.hasKey(this.fixture.keys(queue).ready())).isFalse();
	}

	@Test
	void aQueueWithAHandlerHereOrATimerOwnerElsewhereIsRefused() {
		String queue = "rm-handled";
		RedisQueueControl withHandler = new RedisQueueControl(this.fixture.scripts, this.fixture.settings,
				this.fixture.queues, (name) -> name.equals(queue) ? "mailer" : null);
		this.fixture.queues.register(queue);

		QueueRemoval here = withHandler.remove(queue);
		assertThat(here.outcome()).isEqualTo(Outcome.HANDLED_HERE);
		assertThat(here.message())
			.isEqualTo("Queue 'rm-handled' was not removed: this instance has a handler for it (mailer); "
					+ "remove the handler first");

		this.fixture.store.promote(queue, "instance-7", Duration.ofSeconds(30));
		QueueRemoval elsewhere = this.fixture.control.remove(queue);
		assertThat(elsewhere.outcome()).isEqualTo(Outcome.HANDLED_ELSEWHERE);
		assertThat(elsewhere.message()).contains("instance instance-7 holds its timer");
		assertThat(this.fixture.queues.contains(queue)).isTrue();

		this.fixture.store.resignTimer(queue, "instance-7");
		assertThat(this.fixture.control.remove(queue).removed()).isTrue();
	}

	@Test
	void anInvalidNameIsRefusedBeforeRedis() {
		assertThatExceptionOfType(InvalidTaskRequestException.class)
			.isThrownBy(() -> this.fixture.control.remove("bad name"))
			.withMessageContaining("Queue name 'bad name' is invalid");
	}

	@Test
	void aProducerThatRegisteredTheQueueBeforeItWasRemovedAddsItAgainWhenItSchedules() {
		String queue = "rm-stale-cache";
		RedisDelayedTaskScheduler otherProcess = producerWithItsOwnIndex();
		TaskId first = otherProcess.enqueue(queue, "first");
		this.fixture.scheduler.cancel(queue, first);
		assertThat(this.fixture.control.remove(queue).removed()).isTrue();
		assertThat(this.fixture.queues.contains(queue)).isFalse();

		// That process still remembers having registered the queue.
		otherProcess.enqueue(queue, "second");

		assertThat(this.fixture.queues.contains(queue)).isTrue();
	}

	@Test
	void aTaskScheduledWhileTheQueueIsRemovedAlwaysLeavesItsQueueInTheIndex() throws Exception {
		String queue = "rm-race";
		RedisDelayedTaskScheduler producer = producerWithItsOwnIndex();
		ExecutorService threads = Executors.newFixedThreadPool(2);
		int refused = 0;
		int removed = 0;
		Random random = new Random(42);
		try {
			for (int round = 0; round < 300; round++) {
				CyclicBarrier start = new CyclicBarrier(2);
				// Which side wins depends on the machine's load: hold one side back by up
				// to a millisecond, each side in turn, so that both orders and the
				// interleavings between them happen on any machine.
				long scheduleDelay = (round % 2 == 0) ? random.nextLong(1_000_000) : 0;
				long removeDelay = (round % 2 == 1) ? random.nextLong(1_000_000) : 0;
				Future<TaskId> scheduled = threads.submit(() -> {
					start.await(5, TimeUnit.SECONDS);
					LockSupport.parkNanos(scheduleDelay);
					return producer.enqueue(queue, "job");
				});
				Future<QueueRemoval> removal = threads.submit(() -> {
					start.await(5, TimeUnit.SECONDS);
					LockSupport.parkNanos(removeDelay);
					return this.fixture.control.remove(queue);
				});
				TaskId id = scheduled.get(10, TimeUnit.SECONDS);
				if (removal.get(10, TimeUnit.SECONDS).removed()) {
					removed++;
				}
				else {
					refused++;
				}
				// Whatever the interleaving, a stored task's queue is in the index.
				assertThat(this.fixture.queues.contains(queue)).as("round %d", round).isTrue();
				// Empty the queue again, and remove it alone, for the next round.
				assertThat(this.fixture.scheduler.cancel(queue, id)).isTrue();
				assertThat(this.fixture.control.remove(queue).removed()).as("round %d", round).isTrue();
				assertThat(this.fixture.queues.contains(queue)).isFalse();
			}
		}
		finally {
			threads.shutdownNow();
		}
		// Both orders happened, so the rounds covered the race.
		assertThat(refused).isPositive();
		assertThat(removed).isPositive();
	}

	/**
	 * A scheduler of another process: its own index, with its own memory of
	 * registrations.
	 */
	private RedisDelayedTaskScheduler producerWithItsOwnIndex() {
		return new RedisDelayedTaskScheduler(this.fixture.scripts, this.fixture.settings, this.fixture.codec,
				new QueueIndex(this.fixture.redis, this.fixture.settings.keyPrefix()), (queue) -> 4, 500,
				new DelayedTaskListener() {
				}, ObservationRegistry.NOOP, null);
	}

}

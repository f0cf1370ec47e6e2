package dev.delayedtasks.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.TimerTick;
import dev.delayedtasks.internal.worker.BlockingConnections.BlockingConnection;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.api.StatefulConnection;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

/**
 * Which list a queue's timer blocks on, against a store and blocking connections the test
 * scripts.
 */
class PromotionTimerTests {

	private static final WorkerSettings SETTINGS = new WorkerSettings(Duration.ofSeconds(30), Duration.ofSeconds(5),
			Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofSeconds(5), true, 32);

	private static final PartitionKeys KEYS = PartitionKeys.of("dt", "q");

	@Test
	void anOwnerThatTookTheTimerAtStartUpBlocksOnTheTickListNotTheHandoverList() {
		ScriptedTaskStore store = new ScriptedTaskStore();
		// Redis answers the first tick late, as on a loaded machine.
		CountDownLatch redisAnswers = new CountDownLatch(1);
		store.promote = (tickConsumed) -> {
			try {
				redisAnswers.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new RedisCommandInterruptedException(ex);
			}
			return new TimerTick(System.currentTimeMillis(), true, 3000, -1, -1, false);
		};
		List<List<String>> pops = new CopyOnWriteArrayList<>();
		PromotionTimer timer = new PromotionTimer("q", KEYS, store, "me", SETTINGS, recording(pops), null,
				new Listeners(List.of()));
		timer.start(new QueueThreads("q"));
		try {
			// Whose timer it is is not known yet: the reader does not block on either
			// list.
			await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(pops::isEmpty);
			redisAnswers.countDown();
			await().atMost(Duration.ofSeconds(5)).until(() -> !pops.isEmpty());
			assertThat(timer.isOwner()).isTrue();
			// Else a tick pushed for a new earliest due time would wait a whole block.
			assertThat(pops.get(0)).containsExactly(KEYS.tick());
		}
		finally {
			redisAnswers.countDown();
			timer.stop(System.nanoTime() + Duration.ofSeconds(5).toNanos());
		}
	}

	@Test
	void anOwnerThatCannotReachRedisStopsSayingItOwnsTheTimerOnceItsLeaseRanOut() {
		WorkerSettings shortTtl = new WorkerSettings(Duration.ofSeconds(30), Duration.ofSeconds(5),
				Duration.ofMillis(300), Duration.ofSeconds(1), Duration.ofSeconds(5), true, 32);
		ScriptedTaskStore store = new ScriptedTaskStore();
		AtomicBoolean partitioned = new AtomicBoolean();
		store.promote = (tickConsumed) -> {
			if (partitioned.get()) {
				throw new IllegalStateException("Redis unreachable");
			}
			return new TimerTick(System.currentTimeMillis(), true, 300, -1, -1, false);
		};
		PromotionTimer timer = new PromotionTimer("q", KEYS, store, "me", shortTtl,
				recording(new CopyOnWriteArrayList<>()), null, new Listeners(List.of()));
		timer.start(new QueueThreads("q"));
		try {
			await().atMost(Duration.ofSeconds(5)).until(timer::isOwner);
			// Cut off from Redis: another instance takes the timer over once the lease
			// runs out, and this one must not say it still owns it.
			partitioned.set(true);
			await().atMost(Duration.ofSeconds(5)).until(() -> !timer.isOwner());
			partitioned.set(false);
			await().atMost(Duration.ofSeconds(5)).until(timer::isOwner);
		}
		finally {
			timer.stop(System.nanoTime() + Duration.ofSeconds(5).toNanos());
		}
	}

	/** Connections whose pops record their keys and block, interruptibly. */
	private static BlockingConnections recording(List<List<String>> pops) {
		BlockingConnections connections = mock(BlockingConnections.class);
		given(connections.open(any()))
			.willAnswer((invocation) -> new BlockingConnection(mock(StatefulConnection.class), (seconds, keys) -> {
				pops.add(List.of(keys));
				try {
					Thread.sleep((long) (seconds * 1000));
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new RedisCommandInterruptedException(ex);
				}
				return null;
			}));
		return connections;
	}

}

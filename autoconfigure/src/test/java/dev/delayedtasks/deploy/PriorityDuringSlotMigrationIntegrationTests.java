package dev.delayedtasks.deploy;

import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

import dev.delayedtasks.internal.store.PartitionKeys;
import dev.delayedtasks.internal.store.script.Script;
import dev.delayedtasks.internal.store.script.StoreScripts;
import dev.delayedtasks.test.RedisCluster;
import dev.delayedtasks.test.RedisProcess;
import dev.delayedtasks.test.TestRedis;
import dev.delayedtasks.test.WithRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Priorities during a Cluster slot migration, in the manner of
 * {@link CancelDuringSlotMigrationIntegrationTests}: a script that puts a task of
 * priority 5 back among the ready tasks writes {@code levels} and {@code ready:5}, keys
 * it does not declare. While the queue's slot migrates, a key that is missing on the
 * source (moved, or simply empty: an empty {@code ready:5} does not exist) reads as moved
 * and the script raises there ("non local key"). It must raise before its first write, so
 * that the caller's retry finds the task as it was; Redis does not roll back a script
 * that fails half-way. A priority-0 task never meets this: {@code ready} is declared, so
 * the call is refused whole ({@code TRYAGAIN}) or runs whole.
 */
@WithRedis(cluster = true)
class PriorityDuringSlotMigrationIntegrationTests {

	private static final String ID = "migrating-task";

	private static final String TOKEN = "nonce-1:7";

	private final RedisCluster cluster;

	private final String keyPrefix;

	PriorityDuringSlotMigrationIntegrationTests(TestRedis redis) {
		this.cluster = redis.cluster();
		this.keyPrefix = redis.keyPrefix();
	}

	/**
	 * release.lua (a graceful stop, a handler's RateLimitedException) of a leased task of
	 * priority 5 while its slot migrates and {@code ready:5} is empty.
	 */
	@Test
	void releaseOfAPriorityTaskDuringSlotMigrationRaisesBeforeItsFirstWrite() {
		PartitionKeys keys = PartitionKeys.of(this.keyPrefix, "mig-release-priority");
		onMigratingSource(keys, (source) -> seedLeased(source, keys), (source) -> {
			Map<String, String> task = source.hgetall(keys.task(ID));
			Double deadline = source.zscore(keys.lease(), ID);
			Throwable error = catchThrowable(
					() -> source.eval(StoreScripts.source(Script.RELEASE), ScriptOutputType.MULTI,
							new String[] { keys.ready(), keys.lease(), keys.wake(), keys.stats(), keys.task(ID),
									keys.payload(ID), keys.error(ID), keys.unique("digest-1") },
							keys.base(), "16", "0", "1", ID, TOKEN));
			assertThat(error).hasMessageContaining("non local key");
			assertThat(source.zscore(keys.lease(), ID)).as("still leased").isEqualTo(deadline);
			assertThat(source.hgetall(keys.task(ID))).as("task hash").isEqualTo(task);
		});
	}

	/**
	 * claim.lua promoting a due task of priority 5 while its slot migrates and
	 * {@code ready:5} is empty: it takes the task out of sched and marks it ready, then
	 * raises at the list; the retry finds nothing due, and no list holds the task.
	 */
	@Test
	void promotionOfAPriorityTaskDuringSlotMigrationRaisesBeforeItsFirstWrite() {
		PartitionKeys keys = PartitionKeys.of(this.keyPrefix, "mig-promote-priority");
		onMigratingSource(keys, (source) -> seedDue(source, keys), (source) -> {
			Map<String, String> task = source.hgetall(keys.task(ID));
			Double due = source.zscore(keys.sched(), ID);
			Throwable error = catchThrowable(
					() -> source.eval(StoreScripts.source(Script.CLAIM), ScriptOutputType.MULTI,
							new String[] { keys.sched(), keys.ready(), keys.lease(), keys.dead(), keys.wake(),
									keys.tick(), keys.stats(), keys.meta() },
							keys.base(), "1", "30000", "n1", "100", "100", "5000", "16", "10", "100", "1048576", "D",
							"1000"));
			assertThat(error).hasMessageContaining("non local key");
			assertThat(source.zscore(keys.sched(), ID)).as("still scheduled").isEqualTo(due);
			assertThat(source.hgetall(keys.task(ID))).as("task hash").isEqualTo(task);
		});
	}

	/** Every key the scripts declare exists on the source, so the scripts start there. */
	private void seedCommon(RedisCommands<String, String> source, PartitionKeys keys) {
		long far = System.currentTimeMillis() + 3_600_000;
		source.rpush(keys.ready(), "ghost-hint");
		source.zadd(keys.lease(), far, "another-task");
		source.zadd(keys.sched(), far, "another-task");
		source.zadd(keys.dead(), 1, "another-dead");
		source.rpush(keys.wake(), "1");
		source.rpush(keys.tick(), "1");
		source.hset(keys.stats(), "enq", "2");
		// The queue used priorities before: levels and ready:5 are empty, so absent.
		source.hset(keys.meta(), Map.of("v", "1", "pr", "1"));
	}

	private void seedLeased(RedisCommands<String, String> source, PartitionKeys keys) {
		seedCommon(source, keys);
		long now = System.currentTimeMillis();
		source.hset(keys.task(ID), Map.of("s", "A", "a", "0", "v", "1", "m", "3", "f", "7", "k", TOKEN, "d",
				Long.toString(now), "c", Long.toString(now), "pr", "5", "u", "digest-1"));
		source.set(keys.payload(ID), "{\"h\":{},\"b\":{}}");
		source.set(keys.error(ID), "failed\njava.lang.IllegalStateException\nboom");
		source.set(keys.unique("digest-1"), ID);
		source.zadd(keys.lease(), now + 30_000, ID);
	}

	private void seedDue(RedisCommands<String, String> source, PartitionKeys keys) {
		seedCommon(source, keys);
		long now = System.currentTimeMillis();
		source.hset(keys.task(ID), Map.of("s", "S", "a", "0", "v", "0", "m", "3", "f", "0", "d",
				Long.toString(now - 1000), "c", Long.toString(now - 2000), "pr", "5"));
		source.set(keys.payload(ID), "{\"h\":{},\"b\":{}}");
		source.zadd(keys.sched(), now - 1000, ID);
	}

	private void onMigratingSource(PartitionKeys keys, Consumer<RedisCommands<String, String>> seed,
			Consumer<RedisCommands<String, String>> test) {
		int slot = SlotHash.getSlot(keys.sched());
		RedisProcess source = this.cluster.masterOf(slot);
		RedisProcess target = this.cluster.masters()
			.stream()
			.filter((node) -> node != source)
			.findFirst()
			.orElseThrow();
		RedisClient sourceClient = RedisClient.create(source.uri());
		RedisClient targetClient = RedisClient.create(target.uri());
		try (StatefulRedisConnection<String, String> sourceConnection = sourceClient.connect();
				StatefulRedisConnection<String, String> targetConnection = targetClient.connect()) {
			RedisCommands<String, String> sourceCommands = sourceConnection.sync();
			RedisCommands<String, String> targetCommands = targetConnection.sync();
			seed.accept(sourceCommands);
			String sourceId = sourceCommands.clusterMyId();
			String targetId = targetCommands.clusterMyId();
			targetCommands.clusterSetSlotImporting(slot, sourceId);
			sourceCommands.clusterSetSlotMigrating(slot, targetId);
			try {
				test.accept(sourceCommands);
			}
			finally {
				targetCommands.clusterSetSlotStable(slot);
				sourceCommands.clusterSetSlotStable(slot);
			}
		}
		finally {
			sourceClient.shutdown(Duration.ZERO, Duration.ofSeconds(1));
			targetClient.shutdown(Duration.ZERO, Duration.ofSeconds(1));
		}
	}

}

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
import io.lettuce.core.MigrateArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code cancel.lua} on the master that is moving its queue's slot away, after a key the
 * script did not declare has already moved: the script raises ("non local key", the
 * caller retries once the slot has moved), and it must raise before its first write, so
 * the task is left exactly as it was. Redis does not roll back a script that fails
 * half-way.
 */
@WithRedis(cluster = true)
class CancelDuringSlotMigrationIntegrationTests {

	private static final String ID = "migrating-task";

	private final RedisCluster cluster;

	private final String keyPrefix;

	CancelDuringSlotMigrationIntegrationTests(TestRedis redis) {
		this.cluster = redis.cluster();
		this.keyPrefix = redis.keyPrefix();
	}

	@Test
	void cancelOfScheduledTaskWhoseUniqueSlotMovedChangesNothing() {
		PartitionKeys keys = PartitionKeys.of(this.keyPrefix, "mig-cancel-unique");
		onMigratingSource(keys, (source) -> {
			seedScheduled(source, keys);
			source.hset(keys.task(ID), "u", "digest-1");
			source.set(keys.unique("digest-1"), ID);
		}, (source, targetPort) -> {
			assertThat(
					source.migrate("127.0.0.1", targetPort, 0, 5000, MigrateArgs.Builder.keys(keys.unique("digest-1"))))
				.isEqualTo("OK");
			assertCancelRaisesAndChangesNothing(source, keys);
		});
	}

	@Test
	void cancelOfCorruptTaskWhileTheLeaseSetMovedChangesNothing() {
		PartitionKeys keys = PartitionKeys.of(this.keyPrefix, "mig-cancel-corrupt");
		onMigratingSource(keys, (source) -> {
			seedScheduled(source, keys);
			source.hdel(keys.task(ID), "s");
			// No lease set on the source: while the slot migrates, that reads as "moved"
			// (an ASK), exactly as a key that has been migrated.
			assertThat(source.exists(keys.lease(), keys.dead())).isZero();
		}, (source, targetPort) -> assertCancelRaisesAndChangesNothing(source, keys));
	}

	private void assertCancelRaisesAndChangesNothing(RedisCommands<String, String> source, PartitionKeys keys) {
		Map<String, String> task = source.hgetall(keys.task(ID));
		Double due = source.zscore(keys.sched(), ID);
		assertThat(due).isNotNull();
		Throwable error = catchThrowable(() -> source.eval(script(), ScriptOutputType.MULTI,
				new String[] { keys.sched(), keys.stats(), keys.task(ID), keys.payload(ID), keys.error(ID) },
				keys.base(), ID, "60000"));
		assertThat(error).hasMessageContaining("non local key");
		assertThat(source.zscore(keys.sched(), ID)).as("still scheduled").isEqualTo(due);
		assertThat(source.hgetall(keys.task(ID))).isEqualTo(task);
		assertThat(source.exists(keys.payload(ID), keys.error(ID))).isEqualTo(2L);
		assertThat(source.hgetall(keys.stats())).containsOnlyKeys("enq");
	}

	/**
	 * A task that failed once and waits for its retry: every key cancel declares exists,
	 * which is what lets the script start on the source while the slot is migrating.
	 */
	private void seedScheduled(RedisCommands<String, String> source, PartitionKeys keys) {
		long due = System.currentTimeMillis() + 3_600_000;
		source.hset(keys.task(ID), Map.of("s", "S", "a", "1", "v", "1", "m", "3", "f", "1", "d", Long.toString(due),
				"c", Long.toString(due - 3_600_000)));
		source.set(keys.payload(ID), "{\"h\":{},\"b\":{}}");
		source.set(keys.error(ID), "failed\njava.lang.IllegalStateException\nboom");
		source.zadd(keys.sched(), due, ID);
		// Another entry keeps sched from disappearing with the task's, which would make
		// reading it during the migration an ASK instead of an answer.
		source.zadd(keys.sched(), due + 1, "another-task");
		source.hset(keys.stats(), "enq", "1");
	}

	private void onMigratingSource(PartitionKeys keys, Consumer<RedisCommands<String, String>> seed,
			MigratingSlot test) {
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
				test.run(sourceCommands, target.port());
			}
			finally {
				// Finish nothing: give the slot back to the source, as it was.
				targetCommands.clusterSetSlotStable(slot);
				sourceCommands.clusterSetSlotStable(slot);
			}
		}
		finally {
			sourceClient.shutdown(Duration.ZERO, Duration.ofSeconds(1));
			targetClient.shutdown(Duration.ZERO, Duration.ofSeconds(1));
		}
	}

	private static String script() {
		return StoreScripts.source(Script.CANCEL);
	}

	@FunctionalInterface
	interface MigratingSlot {

		void run(RedisCommands<String, String> source, int targetPort);

	}

}

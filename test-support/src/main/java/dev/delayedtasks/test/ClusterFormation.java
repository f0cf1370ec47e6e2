package dev.delayedtasks.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import io.lettuce.core.MigrateArgs;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * Joins {@code redis-server --cluster-enabled yes} processes into one cluster with the
 * plain cluster commands ({@code ADDSLOTSRANGE}, {@code MEET}, {@code REPLICATE}), as
 * {@code redis-cli --cluster create} does, so no {@code redis-cli} is needed, and waits
 * until every node agrees the cluster is healthy.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
final class ClusterFormation {

	static final int SLOTS = 16384;

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private ClusterFormation() {
	}

	/**
	 * Give each master an equal, contiguous share of the slots, introduce every node to
	 * the first master, make each replica follow its master, and wait until the cluster
	 * is healthy.
	 * @param masters the masters, in slot order
	 * @param replicas the replicas, {@code replicas.get(i)} following master
	 * {@code i % masters.size()}
	 */
	static void form(List<RedisProcess> masters, List<RedisProcess> replicas) {
		List<RedisProcess> all = new ArrayList<>(masters);
		all.addAll(replicas);
		for (int i = 0; i < masters.size(); i++) {
			int first = i * SLOTS / masters.size();
			int last = (i + 1) * SLOTS / masters.size() - 1;
			int epoch = i + 1;
			run(masters.get(i), (commands) -> {
				// Distinct config epochs, as redis-cli gives them, so no node has to win
				// an epoch collision before the cluster settles.
				commands.clusterSetConfigEpoch(epoch);
				return commands.clusterAddSlotsRange(Range.create(first, last));
			});
		}
		int meetPort = masters.get(0).port();
		for (RedisProcess node : all.subList(1, all.size())) {
			run(node, (commands) -> commands.clusterMeet("127.0.0.1", meetPort));
		}
		await(all, "every node knows all " + all.size() + " nodes",
				(commands) -> commands.clusterInfo().contains("cluster_known_nodes:" + all.size() + "\r"));
		for (int i = 0; i < replicas.size(); i++) {
			String masterId = run(masters.get(i % masters.size()), RedisCommands::clusterMyId);
			run(replicas.get(i), (commands) -> commands.clusterReplicate(masterId));
		}
		awaitHealthy(all);
		await(replicas, "replicas are in sync with their masters",
				(commands) -> commands.info("replication").contains("master_link_status:up"));
	}

	/**
	 * Wait until every node reports {@code cluster_state:ok} with all slots served.
	 * @param nodes the nodes to ask
	 */
	static void awaitHealthy(List<RedisProcess> nodes) {
		await(nodes, "cluster_state:ok with all slots served on every node", (commands) -> {
			String info = commands.clusterInfo();
			return info.contains("cluster_state:ok") && info.contains("cluster_slots_ok:" + SLOTS + "\r");
		});
	}

	static boolean servesSlot(RedisProcess node, int slot) {
		String myself = run(node, RedisCommands::clusterNodes).lines()
			.filter((line) -> line.contains("myself"))
			.findFirst()
			.orElse("");
		String[] fields = myself.split(" ");
		for (int i = 8; i < fields.length; i++) {
			if (fields[i].startsWith("[")) {
				continue;
			}
			String[] range = fields[i].split("-");
			if (Integer.parseInt(range[0]) <= slot && slot <= Integer.parseInt(range[range.length - 1])) {
				return true;
			}
		}
		return false;
	}

	static int migrate(RedisProcess source, RedisProcess target, int slot, List<RedisProcess> masters, Duration pause) {
		String sourceId = run(source, RedisCommands::clusterMyId);
		String targetId = run(target, RedisCommands::clusterMyId);
		run(target, (commands) -> commands.clusterSetSlotImporting(slot, sourceId));
		run(source, (commands) -> commands.clusterSetSlotMigrating(slot, targetId));
		// One connection for the whole move, as redis-cli --cluster
		// reshard does: a client started per batch made a move of a
		// few hundred keys take seconds on a loaded machine, the keys
		// of one partition split between two masters all that time.
		int moved = run(source, (commands) -> {
			int count = 0;
			while (true) {
				List<String> keys = commands.clusterGetKeysInSlot(slot, 10);
				if (keys.isEmpty()) {
					return count;
				}
				commands.migrate("127.0.0.1", target.port(), 0, 5000, MigrateArgs.Builder.<String>keys(keys));
				count += keys.size();
				sleep(pause.toMillis());
			}
		});
		// The target first, so that it never redirects back to the source.
		run(target, (commands) -> commands.clusterSetSlotNode(slot, targetId));
		run(source, (commands) -> commands.clusterSetSlotNode(slot, targetId));
		for (RedisProcess master : masters) {
			if (master != source && master != target) {
				run(master, (commands) -> commands.clusterSetSlotNode(slot, targetId));
			}
		}
		return moved;
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisStartFailedException("Interrupted while moving a slot", ex);
		}
	}

	static <T> T run(RedisProcess node, Call<T> call) {
		RedisClient client = RedisClient
			.create(RedisURI.builder(node.uri()).withTimeout(Duration.ofSeconds(5)).build());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return call.apply(connection.sync());
		}
		finally {
			LettuceShutdown.shutdown(client);
		}
	}

	private static void await(List<RedisProcess> nodes, String condition,
			Predicate<RedisCommands<String, String>> check) {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		for (RedisProcess node : nodes) {
			while (!run(node, check::test)) {
				if (System.nanoTime() > deadline) {
					throw new RedisStartFailedException("Redis Cluster did not reach '" + condition + "' within "
							+ TIMEOUT.toSeconds() + " s; node " + node.port() + " says: "
							+ run(node, RedisCommands::clusterInfo).lines().limit(3).toList() + node.logTail());
				}
				try {
					Thread.sleep(50);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new RedisStartFailedException("Interrupted while forming the cluster", ex);
				}
			}
		}
	}

	@FunctionalInterface
	interface Call<T> {

		T apply(RedisCommands<String, String> commands);

	}

}

package dev.delayedtasks.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import io.lettuce.core.RedisURI;

/**
 * A Redis Cluster of {@code redis-server} processes started here: masters sharing the
 * slots evenly, optionally with replicas. Each process has its own pidfile; closing the
 * cluster stops them all.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisCluster implements RedisServer {

	/**
	 * The {@code redis-server} arguments of every node: cluster mode, and a short node
	 * timeout so that a failover in a test takes about a second, not fifteen.
	 */
	static final List<String> NODE_ARGUMENTS = List.of("--cluster-enabled", "yes", "--cluster-node-timeout", "1000");

	private final List<RedisProcess> masters;

	private final List<RedisProcess> replicas;

	private RedisCluster(List<RedisProcess> masters, List<RedisProcess> replicas) {
		this.masters = List.copyOf(masters);
		this.replicas = List.copyOf(replicas);
	}

	/**
	 * Start and join a cluster.
	 * @param starter starts one {@code redis-server} with the given extra arguments
	 * @param masters the number of masters, at least 1
	 * @param replicasPerMaster the number of replicas of each master
	 * @return the healthy cluster
	 */
	static RedisCluster start(NodeStarter starter, int masters, int replicasPerMaster) {
		List<RedisProcess> started = new ArrayList<>();
		try {
			List<RedisProcess> masterNodes = new ArrayList<>();
			List<RedisProcess> replicaNodes = new ArrayList<>();
			for (int i = 0; i < masters * (1 + replicasPerMaster); i++) {
				// A cluster config file of its own per start: a work directory left by an
				// earlier run on the same port must not make the node rejoin that
				// cluster.
				List<String> arguments = new ArrayList<>(NODE_ARGUMENTS);
				arguments.addAll(List.of("--cluster-config-file", "nodes-" + System.nanoTime() + ".conf"));
				RedisProcess node = starter.start(arguments);
				started.add(node);
				((i < masters) ? masterNodes : replicaNodes).add(node);
			}
			ClusterFormation.form(masterNodes, replicaNodes);
			return new RedisCluster(masterNodes, replicaNodes);
		}
		catch (RuntimeException ex) {
			started.forEach(RedisProcess::close);
			throw ex;
		}
	}

	/**
	 * Every node as {@code host:port}, for {@code spring.data.redis.cluster.nodes}.
	 * @return the nodes, masters first
	 */
	public List<String> nodes() {
		return processes().stream().map((node) -> "127.0.0.1:" + node.port()).toList();
	}

	/**
	 * The nodes joined with commas, ready for {@code spring.data.redis.cluster.nodes}.
	 * @return the property value
	 */
	public String nodesProperty() {
		return String.join(",", nodes());
	}

	/**
	 * The nodes started as masters, in slot order (after a failover one of them may have
	 * become a replica).
	 * @return the masters
	 */
	public List<RedisProcess> masters() {
		return this.masters;
	}

	/**
	 * The nodes started as replicas.
	 * @return the replicas
	 */
	public List<RedisProcess> replicas() {
		return this.replicas;
	}

	/**
	 * Every node, masters first.
	 * @return the nodes
	 */
	public List<RedisProcess> processes() {
		List<RedisProcess> all = new ArrayList<>(this.masters);
		all.addAll(this.replicas);
		return all;
	}

	/**
	 * The master serving a slot now, as the running nodes see it.
	 * @param slot the hash slot
	 * @return the master
	 */
	public RedisProcess masterOf(int slot) {
		return processes().stream()
			.filter((node) -> node.process().isAlive())
			.filter((node) -> ClusterFormation.run(node, (commands) -> commands.info("replication"))
				.contains("role:master"))
			.filter((node) -> ClusterFormation.servesSlot(node, slot))
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("No running master serves slot " + slot));
	}

	/**
	 * The running replica of a master.
	 * @param master the master
	 * @return its replica
	 */
	public RedisProcess replicaOf(RedisProcess master) {
		String masterId = ClusterFormation.run(master, (commands) -> commands.clusterMyId());
		return processes().stream()
			.filter((node) -> node != master && node.process().isAlive())
			.filter((node) -> ClusterFormation.run(node, (commands) -> commands.clusterNodes())
				.lines()
				.anyMatch((line) -> line.contains("myself") && line.contains(" " + masterId + " ")))
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("Master " + master.port() + " has no running replica"));
	}

	/**
	 * Move a slot and its keys to another master the way {@code redis-cli --cluster
	 * reshard} does: {@code SETSLOT IMPORTING}/{@code MIGRATING}, {@code MIGRATE} in
	 * batches of ten keys, then {@code SETSLOT NODE} on every master. Clients meanwhile
	 * get {@code ASK} and {@code TRYAGAIN}, then {@code MOVED}.
	 * @param slot the slot
	 * @param target the master to move it to
	 * @param pause the pause between batches of keys, to keep the slot in transit longer
	 * @return the number of keys moved
	 */
	public int migrateSlot(int slot, RedisProcess target, Duration pause) {
		return ClusterFormation.migrate(masterOf(slot), target, slot,
				this.masters.stream().filter((node) -> node.process().isAlive()).toList(), pause);
	}

	/**
	 * Wait until every running node reports a healthy cluster again, for example after a
	 * failover.
	 */
	public void awaitHealthy() {
		ClusterFormation.awaitHealthy(processes().stream().filter((node) -> node.process().isAlive()).toList());
	}

	@Override
	public RedisKind kind() {
		return this.masters.get(0).kind();
	}

	/**
	 * The first master; a cluster client discovers the others from it.
	 * @return the URI of the first master
	 */
	@Override
	public RedisURI uri() {
		return this.masters.get(0).uri();
	}

	@Override
	public List<RedisURI> nodeUris() {
		return processes().stream().filter((node) -> node.process().isAlive()).map(RedisProcess::uri).toList();
	}

	@Override
	public String version() {
		return this.masters.get(0).version();
	}

	@Override
	public ServerVersion serverVersion() {
		return this.masters.get(0).serverVersion();
	}

	@Override
	public String describe() {
		return "Cluster of " + serverVersion().label() + ", " + this.masters.size() + " masters and "
				+ this.replicas.size() + " replicas on "
				+ processes().stream()
					.map((node) -> node.port() + " (pid " + node.process().pid() + ")")
					.collect(Collectors.joining(", "));
	}

	@Override
	public void close() {
		processes().forEach(RedisProcess::close);
	}

	/**
	 * Starts one {@code redis-server} process.
	 */
	@FunctionalInterface
	interface NodeStarter {

		RedisProcess start(List<String> extraArguments);

	}

}

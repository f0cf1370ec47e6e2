package dev.delayedtasks.test;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import io.lettuce.core.sentinel.api.sync.RedisSentinelCommands;
import org.jspecify.annotations.Nullable;

/**
 * A Redis master, one replica and three Sentinels watching them as {@value #MASTER_NAME},
 * all {@code redis-server} (or {@code valkey-server}) processes of one binary started
 * here with their own pidfiles (the binary runs as a Sentinel with {@code --sentinel}).
 * Sentinels declare a master down after one second, so a failover in a test takes
 * seconds.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisSentinels implements RedisServer {

	/** The name the Sentinels know the master by. */
	public static final String MASTER_NAME = "mymaster";

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final List<RedisProcess> dataNodes;

	private final List<RedisProcess> sentinels;

	private RedisSentinels(List<RedisProcess> dataNodes, List<RedisProcess> sentinels) {
		this.dataNodes = List.copyOf(dataNodes);
		this.sentinels = List.copyOf(sentinels);
	}

	static RedisSentinels start(ConfiguredStarter starter) {
		List<RedisProcess> started = new ArrayList<>();
		try {
			RedisProcess master = starter.start(null, List.of());
			started.add(master);
			RedisProcess replica = starter.start(null,
					List.of("--replicaof", "127.0.0.1", Integer.toString(master.port())));
			started.add(replica);
			String config = "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + master.port() + " 2\n"
					+ "sentinel down-after-milliseconds " + MASTER_NAME + " 1000\n" + "sentinel failover-timeout "
					+ MASTER_NAME + " 5000\n";
			List<RedisProcess> sentinels = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				RedisProcess sentinel = starter.start(config, List.of("--sentinel"));
				started.add(sentinel);
				sentinels.add(sentinel);
			}
			RedisSentinels group = new RedisSentinels(List.of(master, replica), sentinels);
			// A failover needs a known, synchronised replica and the other Sentinels.
			group.awaitSentinels("every Sentinel knows the replica and the other two Sentinels",
					(commands) -> commands.replicas(MASTER_NAME)
						.stream()
						.anyMatch((entry) -> entry.get("flags").equals("slave")
								&& "ok".equals(entry.get("master-link-status")))
							&& commands.info("sentinel").contains("sentinels=3"));
			return group;
		}
		catch (RuntimeException ex) {
			started.forEach(RedisProcess::close);
			throw ex;
		}
	}

	/**
	 * The Sentinels as {@code host:port}, joined with commas, for
	 * {@code spring.data.redis.sentinel.nodes}.
	 * @return the property value
	 */
	public String sentinelNodesProperty() {
		return this.sentinels.stream().map(RedisProcess::address).collect(Collectors.joining(","));
	}

	/**
	 * The master and the replica, in the order they were started.
	 * @return the data nodes
	 */
	public List<RedisProcess> dataNodes() {
		return this.dataNodes;
	}

	/**
	 * The Sentinels.
	 * @return the Sentinels
	 */
	public List<RedisProcess> sentinels() {
		return this.sentinels;
	}

	/**
	 * The data node the Sentinels name as master now.
	 * @return the master
	 */
	public RedisProcess master() {
		SocketAddress address = sentinel(this.sentinels.get(0),
				(commands) -> commands.getMasterAddrByName(MASTER_NAME));
		int port = ((InetSocketAddress) address).getPort();
		return this.dataNodes.stream()
			.filter((node) -> node.port() == port)
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("Sentinels name an unknown master on port " + port));
	}

	/**
	 * Force a failover with {@code SENTINEL FAILOVER} and wait until every Sentinel names
	 * the replica as master and it accepts writes.
	 * @return the new master
	 */
	public RedisProcess failover() {
		RedisProcess old = master();
		RedisProcess next = this.dataNodes.stream().filter((node) -> node != old).findFirst().orElseThrow();
		sentinel(this.sentinels.get(0), (commands) -> commands.failover(MASTER_NAME));
		awaitSentinels("every Sentinel names " + next.port() + " as master",
				(commands) -> ((InetSocketAddress) commands.getMasterAddrByName(MASTER_NAME)).getPort() == next.port());
		ClusterFormation.run(next, (commands) -> {
			long deadline = System.nanoTime() + TIMEOUT.toNanos();
			while (!commands.info("replication").contains("role:master")) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException(
							"Port " + next.port() + " did not become master within " + TIMEOUT.toSeconds() + " s");
				}
				sleep();
			}
			return null;
		});
		return next;
	}

	@Override
	public RedisKind kind() {
		return this.dataNodes.get(0).kind();
	}

	/**
	 * The current master, for administrative calls; applications connect through the
	 * Sentinels.
	 * @return the master's URI
	 */
	@Override
	public RedisURI uri() {
		return master().uri();
	}

	@Override
	public List<RedisURI> nodeUris() {
		return List.of(uri());
	}

	@Override
	public String version() {
		return this.dataNodes.get(0).version();
	}

	@Override
	public ServerVersion serverVersion() {
		return this.dataNodes.get(0).serverVersion();
	}

	@Override
	public String describe() {
		return serverVersion().label() + " master and replica on "
				+ this.dataNodes.stream().map(RedisProcess::address).toList() + " watched by Sentinels on "
				+ sentinelNodesProperty();
	}

	@Override
	public void close() {
		Stream.concat(this.sentinels.stream(), this.dataNodes.stream()).forEach(RedisProcess::close);
	}

	private void awaitSentinels(String condition, Predicate<RedisSentinelCommands<String, String>> check) {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		for (RedisProcess sentinel : this.sentinels) {
			while (!sentinel(sentinel, check::test)) {
				if (System.nanoTime() > deadline) {
					throw new RedisStartFailedException(
							"Sentinels did not reach '" + condition + "' within " + TIMEOUT.toSeconds()
									+ " s; Sentinel " + sentinel.port() + " is behind" + sentinel.logTail());
				}
				sleep();
			}
		}
	}

	private static <T> T sentinel(RedisProcess sentinel, Function<RedisSentinelCommands<String, String>, T> call) {
		RedisClient client = RedisClient.create();
		try (StatefulRedisSentinelConnection<String, String> connection = client
			.connectSentinel(RedisURI.builder(sentinel.uri()).withTimeout(Duration.ofSeconds(5)).build())) {
			return call.apply(connection.sync());
		}
		finally {
			LettuceShutdown.shutdown(client);
		}
	}

	private static void sleep() {
		try {
			Thread.sleep(50);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisStartFailedException("Interrupted while waiting for the Sentinels", ex);
		}
	}

	/**
	 * Starts one {@code redis-server} process, optionally with a configuration file.
	 */
	@FunctionalInterface
	interface ConfiguredStarter {

		RedisProcess start(@Nullable String config, List<String> extraArguments);

	}

}

package dev.delayedtasks.internal.store.script;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceExceptionConverter;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Sends a command to every master through Lettuce: the one server of a standalone or
 * Sentinel connection, or each master of a Redis Cluster. Used for what every master must
 * have or tell: its version ({@code HELLO}, which every Redis user may send, so the
 * version needs no {@code INFO} grant) and the {@link FunctionLibrary}. Lettuce's
 * failures become Spring's {@link DataAccessException}s, as on any other call.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisMasters {

	private static final LettuceExceptionConverter EXCEPTIONS = new LettuceExceptionConverter();

	private final StringRedisTemplate redis;

	private final Duration timeout;

	private final String standaloneName;

	/**
	 * Send commands on the template's connection.
	 * @param redis the template
	 * @param timeout how long to wait for each reply
	 */
	public RedisMasters(StringRedisTemplate redis, Duration timeout) {
		this.redis = redis;
		this.timeout = timeout;
		this.standaloneName = standaloneName(redis.getConnectionFactory());
	}

	/**
	 * How messages name the one master of a connection that is not a Cluster's:
	 * {@code host:port}, or the Sentinel master's name.
	 * @param connectionFactory the connection factory
	 * @return the name
	 */
	private static String standaloneName(@Nullable RedisConnectionFactory connectionFactory) {
		if (connectionFactory instanceof LettuceConnectionFactory lettuce) {
			RedisSentinelConfiguration sentinel = lettuce.getSentinelConfiguration();
			if (lettuce.isRedisSentinelAware() && sentinel != null && sentinel.getMaster() != null) {
				return "the Sentinel master " + sentinel.getMaster().getName();
			}
			return lettuce.getHostName() + ":" + lettuce.getPort();
		}
		return "Redis";
	}

	/**
	 * Run a command on every master and wait for each reply. A command that must not stop
	 * at the first master that fails maps its failure to a reply of its own
	 * ({@link java.util.concurrent.CompletionStage#handle}).
	 * @param <T> the reply type
	 * @param command the command, given a master's connection
	 * @return the replies, by master ({@code host:port}, or the Sentinel master's name),
	 * in the order of the masters
	 * @throws DataAccessException when a master fails or refuses the command
	 */
	public <T> Map<String, T> onEveryMaster(
			Function<RedisClusterAsyncCommands<byte[], byte[]>, ? extends CompletionStage<T>> command) {
		Map<String, T> replies = this.redis.execute((RedisCallback<Map<String, T>>) (connection) -> {
			Map<String, T> byMaster = new LinkedHashMap<>();
			Object nativeConnection = nativeConnection(connection);
			if (nativeConnection instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
				@SuppressWarnings("unchecked")
				RedisAdvancedClusterAsyncCommands<byte[], byte[]> commands = (RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster;
				for (RedisClusterNode node : commands.getStatefulConnection().getPartitions()) {
					if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.is(RedisClusterNode.NodeFlag.FAIL)) {
						String address = node.getUri().getHost() + ":" + node.getUri().getPort();
						byMaster.put(address, await(command.apply(commands.getConnection(node.getNodeId()))));
					}
				}
			}
			else {
				@SuppressWarnings("unchecked")
				RedisClusterAsyncCommands<byte[], byte[]> commands = (RedisClusterAsyncCommands<byte[], byte[]>) nativeConnection;
				byMaster.put(this.standaloneName, await(command.apply(commands)));
			}
			return byMaster;
		});
		return (replies != null) ? replies : Map.of();
	}

	/**
	 * Run a command on the connection scripts use (routed by its first key on a Cluster)
	 * and wait for the reply.
	 * @param <T> the reply type
	 * @param command the command, given the connection
	 * @return the reply
	 * @throws DataAccessException when Redis fails or refuses the command
	 */
	<T> T onRoutedConnection(
			Function<RedisClusterAsyncCommands<byte[], byte[]>, ? extends CompletionStage<T>> command) {
		return this.redis.execute((RedisCallback<T>) (connection) -> {
			@SuppressWarnings("unchecked")
			RedisClusterAsyncCommands<byte[], byte[]> commands = (RedisClusterAsyncCommands<byte[], byte[]>) nativeConnection(
					connection);
			return await(command.apply(commands));
		});
	}

	/**
	 * Send a command on the connection scripts use (routed by its first key on a Cluster)
	 * without waiting for the reply: the non-blocking path. Only on a shared native
	 * connection ({@link #sendsWithoutWaiting()}): a dedicated one is released when the
	 * callback returns, before the reply.
	 * @param <T> the reply type
	 * @param command the command, given the connection
	 * @return the reply, failing with a {@link DataAccessException} as the blocking call
	 * does, or with a {@link QueryTimeoutException} after the timeout
	 */
	<T> CompletableFuture<T> sendRouted(
			Function<RedisClusterAsyncCommands<byte[], byte[]>, ? extends CompletionStage<T>> command) {
		CompletionStage<T> stage = this.redis.execute((RedisCallback<CompletionStage<T>>) (connection) -> {
			@SuppressWarnings("unchecked")
			RedisClusterAsyncCommands<byte[], byte[]> commands = (RedisClusterAsyncCommands<byte[], byte[]>) nativeConnection(
					connection);
			return command.apply(commands);
		});
		CompletableFuture<T> reply = new CompletableFuture<>();
		if (stage == null) {
			reply.completeExceptionally(new RedisSystemException("Redis sent no reply", null));
			return reply;
		}
		stage.toCompletableFuture()
			.orTimeout(this.timeout.toMillis(), TimeUnit.MILLISECONDS)
			.whenComplete((value, ex) -> {
				if (ex == null) {
					reply.complete(value);
				}
				else {
					reply.completeExceptionally(translate(ex));
				}
			});
		return reply;
	}

	/**
	 * Whether {@link #sendRouted} may be used: the template's connections share Lettuce's
	 * native connection (Spring Boot's default).
	 * @return whether a command can be sent without waiting for its reply
	 */
	boolean sendsWithoutWaiting() {
		return this.redis.getConnectionFactory() instanceof LettuceConnectionFactory lettuce
				&& lettuce.getShareNativeConnection();
	}

	/**
	 * The server name and version of every master, from {@code HELLO} without arguments,
	 * which answers in the connection's protocol and changes nothing.
	 * @return the versions, by master
	 * @throws DataAccessException when a master cannot be reached
	 */
	public Map<String, RedisVersion> versions() {
		return onEveryMaster((commands) -> commands.dispatch(CommandType.HELLO, new HelloOutput(),
				new CommandArgs<>(ByteArrayCodec.INSTANCE)));
	}

	private static Object nativeConnection(RedisConnection connection) {
		Object nativeConnection = connection.getNativeConnection();
		if (!(nativeConnection instanceof RedisClusterAsyncCommands<?, ?>)) {
			throw new InvalidDataAccessApiUsageException("delayed-tasks needs a Lettuce connection for this, not "
					+ nativeConnection.getClass().getName() + ": use Spring Boot's default Redis client (Lettuce)");
		}
		return nativeConnection;
	}

	private <T> T await(CompletionStage<T> stage) {
		CompletableFuture<T> future = stage.toCompletableFuture();
		try {
			return future.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			throw new QueryTimeoutException("Redis did not answer within " + this.timeout.toMillis() + " ms", ex);
		}
		catch (ExecutionException ex) {
			throw translate(ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisSystemException("Interrupted while waiting for Redis", ex);
		}
	}

	private DataAccessException translate(@Nullable Throwable failure) {
		Throwable cause = (failure instanceof CompletionException completion && completion.getCause() != null)
				? completion.getCause() : failure;
		if (cause instanceof DataAccessException dataAccess) {
			return dataAccess;
		}
		if (cause instanceof TimeoutException timedOut) {
			return new QueryTimeoutException("Redis did not answer within " + this.timeout.toMillis() + " ms",
					timedOut);
		}
		DataAccessException translated = (cause instanceof Exception exception) ? EXCEPTIONS.convert(exception) : null;
		return (translated != null) ? translated : new RedisSystemException(String.valueOf(cause), cause);
	}

	/**
	 * Reads {@code server} and {@code version} from a {@code HELLO} reply: a flat array
	 * of names and values in RESP2, a map in RESP3. Both arrive here as a sequence of
	 * values; {@code modules}, the only nested entry, comes last.
	 */
	private static final class HelloOutput extends CommandOutput<byte[], byte[], RedisVersion> {

		private final List<String> values = new ArrayList<>();

		HelloOutput() {
			super(ByteArrayCodec.INSTANCE, null);
		}

		@Override
		public void set(ByteBuffer bytes) {
			this.values.add((bytes != null) ? StandardCharsets.UTF_8.decode(bytes).toString() : "");
		}

		@Override
		public void set(long integer) {
			this.values.add(Long.toString(integer));
		}

		@Override
		public RedisVersion get() {
			return RedisVersion.parse(valueOf("server", "redis"), valueOf("version", "0.0.0"));
		}

		private String valueOf(String name, String otherwise) {
			int index = this.values.indexOf(name);
			return (index >= 0 && index + 1 < this.values.size()) ? this.values.get(index + 1) : otherwise;
		}

	}

}

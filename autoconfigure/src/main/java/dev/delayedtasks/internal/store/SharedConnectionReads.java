package dev.delayedtasks.internal.store;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Reads of many keys sent together on the template's shared Lettuce connection, without
 * waiting for each reply before sending the next: the round trip of a pipeline, without
 * the connection of its own that Spring Data Redis opens for every pipeline (a page view
 * would open and close one each time). On a Cluster each command goes to its key's node.
 * One key of the wrong type (bad data) reads as {@code null} and leaves the others
 * readable; any other error fails the read.
 *
 * @author delayed-tasks
 * @since 0.3.0
 */
public final class SharedConnectionReads {

	private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

	private final StringRedisTemplate redis;

	private final Duration timeout;

	/**
	 * Create the reads.
	 * @param redis the template, on a Lettuce connection factory
	 */
	public SharedConnectionReads(StringRedisTemplate redis) {
		this.redis = redis;
		this.timeout = (redis.getConnectionFactory() instanceof LettuceConnectionFactory lettuce)
				? Duration.ofMillis(lettuce.getTimeout()) : DEFAULT_TIMEOUT;
	}

	/**
	 * One field of each hash.
	 * @param keys the hashes
	 * @param field the field
	 * @return one value per key, {@code null} where the key, or the field, is missing or
	 * the key is not a hash
	 */
	public List<@Nullable String> hget(List<String> keys, String field) {
		byte[] name = bytes(field);
		return strings(send(keys, (commands, key) -> commands.hget(key, name)));
	}

	/**
	 * Each string.
	 * @param keys the keys
	 * @return one value per key, {@code null} where the key is missing or not a string
	 */
	public List<@Nullable String> get(List<String> keys) {
		return strings(send(keys, RedisClusterAsyncCommands::get));
	}

	/**
	 * Each list's length.
	 * @param keys the lists
	 * @return one length per key, 0 where the key is missing or not a list
	 */
	public List<Long> llen(List<String> keys) {
		List<Long> lengths = new ArrayList<>(keys.size());
		for (Long length : send(keys, RedisClusterAsyncCommands::llen)) {
			lengths.add((length != null) ? length : 0L);
		}
		return lengths;
	}

	private <T> List<@Nullable T> send(List<String> keys, Command<T> command) {
		if (keys.isEmpty()) {
			return List.of();
		}
		List<@Nullable T> replies = this.redis.execute((RedisCallback<List<@Nullable T>>) (connection) -> {
			RedisClusterAsyncCommands<byte[], byte[]> commands = commands(connection.getNativeConnection());
			List<RedisFuture<T>> sent = new ArrayList<>(keys.size());
			for (String key : keys) {
				sent.add(command.send(commands, bytes(key)));
			}
			List<@Nullable T> answers = new ArrayList<>(sent.size());
			for (RedisFuture<T> reply : sent) {
				answers.add(await(reply));
			}
			return answers;
		});
		return (replies != null) ? replies : List.of();
	}

	private <T> @Nullable T await(RedisFuture<T> reply) {
		try {
			return reply.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			reply.cancel(true);
			throw new QueryTimeoutException("Redis did not answer within " + this.timeout.toMillis() + " ms", ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			if (cause.getMessage() != null && cause.getMessage().startsWith("WRONGTYPE")) {
				return null;
			}
			throw new RedisSystemException("A read of Redis failed: " + cause.getMessage(), cause);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new RedisSystemException("Interrupted while waiting for Redis", ex);
		}
	}

	@SuppressWarnings("unchecked")
	private static RedisClusterAsyncCommands<byte[], byte[]> commands(Object nativeConnection) {
		if (!(nativeConnection instanceof RedisClusterAsyncCommands<?, ?> commands)) {
			throw new InvalidDataAccessApiUsageException("delayed-tasks needs a Lettuce connection for this, not "
					+ nativeConnection.getClass().getName() + ": use Spring Boot's default Redis client (Lettuce)");
		}
		return (RedisClusterAsyncCommands<byte[], byte[]>) commands;
	}

	private static List<@Nullable String> strings(List<byte @Nullable []> replies) {
		List<@Nullable String> strings = new ArrayList<>(replies.size());
		for (byte[] reply : replies) {
			strings.add((reply != null) ? new String(reply, StandardCharsets.UTF_8) : null);
		}
		return strings;
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/** One command on one key. */
	@FunctionalInterface
	private interface Command<T> {

		RedisFuture<T> send(RedisClusterAsyncCommands<byte[], byte[]> commands, byte[] key);

	}

}

package dev.delayedtasks.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives a test class a real Redis through a {@link TestRedis} parameter (constructor,
 * lifecycle or test method). Without attributes the class shares one server per test JVM
 * and isolates itself by a key prefix of its own; every key under that prefix is deleted
 * after the class.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(RedisServerExtension.class)
public @interface WithRedis {

	/**
	 * The kind of server. {@link RedisKind#ANY} also honours the
	 * {@code delayed-tasks.test.redis.kind} system property, which CI uses to rerun tests
	 * on Redis 6.2 and on Valkey (for a private, TLS, cluster or Sentinel class only when
	 * it names a binary: {@code bundled-6.2}, {@code path} or {@code valkey}). A kind
	 * that is not available here skips each test of the class with the missing
	 * prerequisite; a server that was started but does not work fails it.
	 * @return the kind
	 */
	RedisKind kind() default RedisKind.ANY;

	/**
	 * Whether the class gets a server of its own, started for it and stopped after it:
	 * always a {@code redis-server} process of this JVM's own ({@link RedisProcess}; a
	 * {@code valkey-server} under {@link RedisKind#VALKEY}), never a container or the
	 * shared URL. Tests that restart, flush, pause or reconfigure Redis must ask for one.
	 * @return whether the server is private
	 */
	boolean privateServer() default false;

	/**
	 * Further {@code redis-server} arguments for a {@link #privateServer() private}
	 * server, for example {@code {"--appendonly", "yes"}}. Arguments the server refuses
	 * fail the class with the server's log.
	 * @return the arguments
	 */
	String[] arguments() default {};

	/**
	 * Whether the class gets a private {@code redis-server} that accepts TLS connections
	 * only (no plain port), with a certificate signed by a CA made for this run; clients
	 * trust it through {@link TestRedis#caCertificate()}. Implies
	 * {@link #privateServer()}. The class is skipped, with the reason, when
	 * {@code openssl} is missing or {@code redis-server} was built without TLS.
	 * @return whether the server speaks TLS
	 */
	boolean tls() default false;

	/**
	 * Whether the class gets a Redis Cluster of three masters of its own (always private,
	 * always {@code redis-server} processes), reachable through
	 * {@link TestRedis#cluster()}.
	 * @return whether to start a cluster
	 */
	boolean cluster() default false;

	/**
	 * The number of replicas of each master of a {@link #cluster() cluster}.
	 * @return the replicas per master
	 */
	int replicasPerMaster() default 0;

	/**
	 * Whether the class gets a master, a replica and three Sentinels of its own (always
	 * private {@code redis-server} processes, from the {@code PATH} or else the bundled
	 * binary), reachable through {@link TestRedis#sentinels()}.
	 * @return whether to start Sentinels
	 */
	boolean sentinel() default false;

}

package dev.delayedtasks.test;

import java.util.List;
import java.util.UUID;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestInstanceFactoryContext;
import org.junit.jupiter.api.extension.TestInstancePreConstructCallback;
import org.junit.platform.commons.support.AnnotationSupport;
import org.opentest4j.TestAbortedException;

/**
 * JUnit extension behind {@link WithRedis}: resolves a real Redis once per kind and test
 * JVM (or once per class for private servers), hands each class a {@link TestRedis} with
 * its own key prefix, and deletes that prefix's keys afterwards. Servers it started are
 * stopped when the JVM's test run ends, also when tests fail.
 * <p>
 * A missing prerequisite ({@link RedisUnavailableException}: no binary of the requested
 * kind, no Docker, no URL, no {@code openssl}) skips each test of the class with a
 * one-line reason. Anything else, such as a server that was started but exited, never
 * answered {@code PING}, a cluster that did not form or Sentinels that did not converge,
 * fails it with the server's log. Private, TLS, cluster and Sentinel classes always get
 * {@code redis-server} processes of their own ({@code valkey-server} when
 * {@link RedisKind#VALKEY} is asked for or forced), never a container or the shared URL.
 * Which Redis each class got is appended to {@value RedisServers#USED_FILE} in the
 * pidfile directory.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisServerExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
		TestInstancePreConstructCallback, ParameterResolver {

	private static final Log logger = LogFactory.getLog(RedisServerExtension.class);

	private static final Namespace NAMESPACE = Namespace.create(RedisServerExtension.class);

	private static final String SKIP_REASON = "skip-reason";

	@Override
	public void beforeAll(ExtensionContext context) {
		WithRedis settings = AnnotationSupport.findAnnotation(context.getRequiredTestClass(), WithRedis.class)
			.orElse(null);
		RedisKind requested = (settings != null) ? settings.kind() : RedisKind.ANY;
		boolean tls = settings != null && settings.tls();
		boolean destructive = settings != null
				&& (settings.privateServer() || tls || settings.cluster() || settings.sentinel());
		RedisServers servers = servers(context);
		RedisKind kind = resolveKind(requested, servers.forcedKind(), destructive);
		RedisServer server;
		try {
			if (settings != null && settings.cluster()) {
				server = context.getStore(NAMESPACE)
					.computeIfAbsent("cluster", (key) -> servers.startCluster(kind, 3, settings.replicasPerMaster()),
							RedisServer.class);
			}
			else if (settings != null && settings.sentinel()) {
				server = context.getStore(NAMESPACE)
					.computeIfAbsent("sentinels", (key) -> servers.startSentinels(kind), RedisServer.class);
			}
			else {
				server = destructive ? privateServer(context, servers, kind, List.of(settings.arguments()), tls)
						: sharedServer(context, servers, kind);
			}
		}
		catch (RedisUnavailableException ex) {
			// Not an abort of the class: Surefire and Failsafe report a class aborted as
			// a whole as no tests at all, so each test of it is skipped instead.
			context.getStore(NAMESPACE).put(SKIP_REASON, skipReason(kind, ex));
			return;
		}
		servers.recordUse(server, context.getRequiredTestClass().getName());
		String prefix = "dtt-" + UUID.randomUUID().toString().substring(0, 8);
		context.getStore(NAMESPACE).put(TestRedis.class, new TestRedis(server, prefix));
	}

	/**
	 * The kind to resolve: the class's own, else the forced one. A class that restarts,
	 * pauses, reconfigures or clusters its Redis gets a {@code redis-server} process of
	 * its own whatever kind is forced, so only a forced binary applies to it.
	 * @param requested the kind the class asked for
	 * @param forced the kind forced for the run, or {@code null}
	 * @param destructive whether the class needs a process of its own
	 * @return the kind to resolve
	 * @throws IllegalStateException if a class that needs a process of its own asked for
	 * a URL or a container
	 */
	static RedisKind resolveKind(RedisKind requested, @Nullable RedisKind forced, boolean destructive) {
		if (!destructive) {
			return (requested == RedisKind.ANY && forced != null) ? forced : requested;
		}
		if (requested == RedisKind.URL || requested == RedisKind.DOCKER) {
			throw new IllegalStateException("@WithRedis(kind = " + requested + ") cannot be combined with a private, "
					+ "TLS, cluster or Sentinel server: those are redis-server processes of the class's own; "
					+ "use kind ANY, PATH_BINARY, BUNDLED_6_2 or VALKEY");
		}
		return (requested == RedisKind.ANY && forced != null) ? RedisServers.processKind(forced) : requested;
	}

	/**
	 * The one line a skipped class reports: the kind it wanted and the missing
	 * prerequisite.
	 * @param kind the kind the class wanted
	 * @param ex why it is not available
	 * @return the reason
	 */
	static String skipReason(RedisKind kind, RedisUnavailableException ex) {
		String message = String.valueOf(ex.getMessage()).lines().findFirst().orElse("");
		return "Skipped, no Redis of kind " + kind + " here: " + message;
	}

	@Override
	public void preConstructTestInstance(TestInstanceFactoryContext factoryContext, ExtensionContext context) {
		// Before the constructor asks for the TestRedis that the class did not get.
		abortIfSkipped(context);
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		abortIfSkipped(context);
	}

	private static void abortIfSkipped(ExtensionContext context) {
		String reason = find(context, SKIP_REASON, String.class);
		if (reason != null) {
			throw new TestAbortedException(reason);
		}
	}

	@Override
	public void afterAll(ExtensionContext context) {
		TestRedis redis = context.getStore(NAMESPACE).get(TestRedis.class, TestRedis.class);
		if (redis != null) {
			try {
				redis.deleteKeys();
			}
			catch (RuntimeException ex) {
				logger.warn("Could not delete test keys under '" + redis.keyPrefix() + "': " + ex.getMessage());
			}
		}
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return parameterContext.getParameter().getType() == TestRedis.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		TestRedis redis = find(extensionContext, TestRedis.class, TestRedis.class);
		if (redis == null) {
			throw new ParameterResolutionException("No TestRedis: annotate the test class with @WithRedis");
		}
		return redis;
	}

	private static <T> @Nullable T find(ExtensionContext extensionContext, Object key, Class<T> type) {
		ExtensionContext context = extensionContext;
		while (context != null) {
			T value = context.getStore(NAMESPACE).get(key, type);
			if (value != null) {
				return value;
			}
			context = context.getParent().orElse(null);
		}
		return null;
	}

	private static RedisServers servers(ExtensionContext context) {
		return context.getRoot()
			.getStore(NAMESPACE)
			.computeIfAbsent(RedisServers.class, (key) -> RedisServers.fromEnvironment(), RedisServers.class);
	}

	private static RedisServer sharedServer(ExtensionContext context, RedisServers servers, RedisKind kind) {
		// Stored in the root context so that it is closed once, when the whole test run
		// of this JVM ends.
		return context.getRoot()
			.getStore(NAMESPACE)
			.computeIfAbsent("shared-" + kind, (key) -> servers.shared(kind), RedisServer.class);
	}

	private static RedisServer privateServer(ExtensionContext context, RedisServers servers, RedisKind kind,
			List<String> arguments, boolean tls) {
		return context.getStore(NAMESPACE)
			.computeIfAbsent("private",
					(key) -> tls ? servers.startTls(kind, arguments) : servers.startProcess(kind, arguments),
					RedisServer.class);
	}

}

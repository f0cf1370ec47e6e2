package dev.delayedtasks.test;

import java.util.List;
import java.util.UUID;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;
import org.opentest4j.TestAbortedException;

/**
 * JUnit extension behind {@link WithRedis}: resolves a real Redis once per kind and test
 * JVM (or once per class for private servers), hands each class a {@link TestRedis} with
 * its own key prefix, and deletes that prefix's keys afterwards. Servers it started are
 * stopped when the JVM's test run ends, also when tests fail.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class RedisServerExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {

	private static final Log logger = LogFactory.getLog(RedisServerExtension.class);

	private static final Namespace NAMESPACE = Namespace.create(RedisServerExtension.class);

	@Override
	public void beforeAll(ExtensionContext context) {
		WithRedis settings = AnnotationSupport.findAnnotation(context.getRequiredTestClass(), WithRedis.class)
			.orElse(null);
		RedisKind kind = (settings != null) ? settings.kind() : RedisKind.ANY;
		boolean tls = settings != null && settings.tls();
		boolean privateServer = settings != null && (settings.privateServer() || tls);
		RedisServers servers = servers(context);
		if (kind == RedisKind.ANY && servers.forcedKind() != null) {
			kind = servers.forcedKind();
		}
		RedisServer server;
		try {
			if (settings != null && settings.cluster()) {
				RedisKind clusterKind = kind;
				server = context.getStore(NAMESPACE)
					.computeIfAbsent("cluster",
							(key) -> servers.startCluster(clusterKind, 3, settings.replicasPerMaster()),
							RedisServer.class);
			}
			else if (settings != null && settings.sentinel()) {
				server = context.getStore(NAMESPACE)
					.computeIfAbsent("sentinels", (key) -> servers.startSentinels(), RedisServer.class);
			}
			else {
				server = privateServer ? privateServer(context, servers, kind, List.of(settings.arguments()), tls)
						: sharedServer(context, servers, kind);
			}
		}
		catch (RedisUnavailableException ex) {
			throw new TestAbortedException("No Redis of kind " + kind + " here: " + ex.getMessage(), ex);
		}
		String prefix = "dtt-" + UUID.randomUUID().toString().substring(0, 8);
		context.getStore(NAMESPACE).put(TestRedis.class, new TestRedis(server, prefix));
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
		ExtensionContext context = extensionContext;
		while (context != null) {
			TestRedis redis = context.getStore(NAMESPACE).get(TestRedis.class, TestRedis.class);
			if (redis != null) {
				return redis;
			}
			context = context.getParent().orElse(null);
		}
		throw new ParameterResolutionException("No TestRedis: annotate the test class with @WithRedis");
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
					(key) -> tls ? servers.startTls(kind, arguments) : servers.startPrivate(kind, arguments),
					RedisServer.class);
	}

}

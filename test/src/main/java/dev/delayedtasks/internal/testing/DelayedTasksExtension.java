package dev.delayedtasks.internal.testing;

import java.util.UUID;

import dev.delayedtasks.testing.AutoConfigureDelayedTasks;
import dev.delayedtasks.testing.DelayedTasksTest;
import dev.delayedtasks.testing.DelayedTasksTester;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;

/**
 * Internal: the JUnit extension behind {@link DelayedTasksTest}: one application context
 * per test class, with the test auto-configuration of {@link AutoConfigureDelayedTasks},
 * cleared after each test and closed after the last.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class DelayedTasksExtension
		implements BeforeAllCallback, AfterEachCallback, AfterAllCallback, ParameterResolver {

	private static final Namespace NAMESPACE = Namespace.create(DelayedTasksExtension.class);

	@Override
	public void beforeAll(ExtensionContext extensionContext) {
		DelayedTasksTest settings = AnnotationSupport
			.findAnnotation(extensionContext.getRequiredTestClass(), DelayedTasksTest.class)
			.orElseThrow(() -> new IllegalStateException(
					"Annotate " + extensionContext.getRequiredTestClass().getName() + " with @DelayedTasksTest"));
		AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
		try {
			// The prefix last: it wins over one in the properties, as in a Spring test.
			TestPropertyValues.of(settings.properties())
				.and("delayed-tasks.key-prefix=dtt-" + UUID.randomUUID().toString().substring(0, 8))
				.applyTo(context.getEnvironment(), TestPropertyValues.Type.MAP,
						KeyPrefixContextCustomizerFactory.PROPERTY_SOURCE);
			context.register(DelayedTasksTestConfiguration.class);
			if (settings.classes().length > 0) {
				context.register(settings.classes());
			}
			context.refresh();
		}
		catch (RuntimeException ex) {
			context.close();
			throw ex;
		}
		extensionContext.getStore(NAMESPACE).put(AnnotationConfigApplicationContext.class, context);
	}

	@Override
	public void afterEach(ExtensionContext extensionContext) {
		AnnotationConfigApplicationContext context = find(extensionContext);
		if (context != null) {
			context.getBeanProvider(DelayedTasksTester.class).ifAvailable(DelayedTasksTester::clear);
		}
	}

	@Override
	public void afterAll(ExtensionContext extensionContext) {
		AnnotationConfigApplicationContext context = extensionContext.getStore(NAMESPACE)
			.remove(AnnotationConfigApplicationContext.class, AnnotationConfigApplicationContext.class);
		if (context != null) {
			context.close();
		}
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		AnnotationConfigApplicationContext context = find(extensionContext);
		return context != null && context.getBeanProvider(type(parameterContext)).getIfUnique() != null;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		AnnotationConfigApplicationContext context = find(extensionContext);
		Object bean = (context != null) ? context.getBeanProvider(type(parameterContext)).getIfUnique() : null;
		if (bean == null) {
			throw new ParameterResolutionException("No unique bean of type " + type(parameterContext)
					+ " in the @DelayedTasksTest context: add its class to @DelayedTasksTest(classes = ...)");
		}
		return bean;
	}

	private static ResolvableType type(ParameterContext parameterContext) {
		return ResolvableType.forMethodParameter(MethodParameter.forParameter(parameterContext.getParameter()));
	}

	private static @Nullable AnnotationConfigApplicationContext find(ExtensionContext extensionContext) {
		ExtensionContext current = extensionContext;
		while (current != null) {
			AnnotationConfigApplicationContext context = current.getStore(NAMESPACE)
				.get(AnnotationConfigApplicationContext.class, AnnotationConfigApplicationContext.class);
			if (context != null) {
				return context;
			}
			current = current.getParent().orElse(null);
		}
		return null;
	}

	/**
	 * The test auto-configuration, as {@link AutoConfigureDelayedTasks} imports it.
	 */
	@Configuration(proxyBeanMethods = false)
	@AutoConfigureDelayedTasks
	static class DelayedTasksTestConfiguration {

	}

}

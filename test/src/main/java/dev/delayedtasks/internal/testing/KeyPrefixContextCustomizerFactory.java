package dev.delayedtasks.internal.testing;

import java.util.List;
import java.util.UUID;

import dev.delayedtasks.testing.AutoConfigureDelayedTasks;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * Internal: gives every test context set up by {@code @AutoConfigureDelayedTasks} a key
 * prefix of its own, {@code delayed-tasks.key-prefix=dtt-<random>}, over any prefix the
 * application configures, so contexts that run at once on one Redis (a cached context's
 * workers, other test JVMs, other builds on a shared server) never see each other's
 * tasks.
 *
 * @author delayed-tasks
 * @since 0.1.0
 */
public final class KeyPrefixContextCustomizerFactory implements ContextCustomizerFactory {

	/** The property source that holds the prefix. */
	static final String PROPERTY_SOURCE = "delayedTasksTestKeyPrefix";

	@Override
	public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		return TestContextAnnotationUtils.hasAnnotation(testClass, AutoConfigureDelayedTasks.class)
				? new KeyPrefixContextCustomizer() : null;
	}

	/**
	 * Chooses the prefix when the context is created, not per test class: classes that
	 * share a cached context share its prefix (and run one after another), and every
	 * instance is equal so the customizer never splits the context cache.
	 */
	static final class KeyPrefixContextCustomizer implements ContextCustomizer {

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
			String prefix = "dtt-" + UUID.randomUUID().toString().substring(0, 8);
			TestPropertyValues.of("delayed-tasks.key-prefix=" + prefix)
				.applyTo(context.getEnvironment(), TestPropertyValues.Type.MAP, PROPERTY_SOURCE);
		}

		@Override
		public boolean equals(@Nullable Object other) {
			return other != null && other.getClass() == getClass();
		}

		@Override
		public int hashCode() {
			return getClass().hashCode();
		}

	}

}

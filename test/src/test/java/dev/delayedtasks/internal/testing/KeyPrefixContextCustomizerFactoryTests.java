package dev.delayedtasks.internal.testing;

import java.util.List;
import java.util.Map;

import dev.delayedtasks.testing.AutoConfigureDelayedTasks;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.MergedContextConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

class KeyPrefixContextCustomizerFactoryTests {

	private final KeyPrefixContextCustomizerFactory factory = new KeyPrefixContextCustomizerFactory();

	@Test
	void classesWithoutTheAnnotationAreLeftAlone() {
		assertThat(this.factory.createContextCustomizer(Plain.class, List.of())).isNull();
	}

	@Test
	void annotatedClassesTheirSubclassesAndNestedClassesGetAPrefix() {
		assertThat(this.factory.createContextCustomizer(Annotated.class, List.of())).isNotNull();
		assertThat(this.factory.createContextCustomizer(Sub.class, List.of())).isNotNull();
		assertThat(this.factory.createContextCustomizer(Annotated.Inner.class, List.of())).isNotNull();
	}

	@Test
	void customizersAreEqualSoTheyNeverSplitTheContextCache() {
		ContextCustomizer one = this.factory.createContextCustomizer(Annotated.class, List.of());
		ContextCustomizer other = this.factory.createContextCustomizer(Sub.class, List.of());
		assertThat(one).isEqualTo(other).hasSameHashCodeAs(other);
	}

	@Test
	void eachContextGetsAPrefixOfItsOwnOverTheApplicationsOwn() {
		ContextCustomizer customizer = this.factory.createContextCustomizer(Annotated.class, List.of());
		String first = prefixOf(customizer);
		String second = prefixOf(customizer);
		assertThat(first).matches("dtt-[0-9a-f]{8}");
		assertThat(second).matches("dtt-[0-9a-f]{8}").isNotEqualTo(first);
	}

	private static String prefixOf(ContextCustomizer customizer) {
		try (GenericApplicationContext context = new GenericApplicationContext()) {
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("application", Map.of("delayed-tasks.key-prefix", "app")));
			customizer.customizeContext(context, mock(MergedContextConfiguration.class));
			return context.getEnvironment().getRequiredProperty("delayed-tasks.key-prefix");
		}
	}

	static class Plain {

	}

	@AutoConfigureDelayedTasks
	static class Annotated {

		@Nested
		class Inner {

		}

	}

	static class Sub extends Annotated {

	}

}

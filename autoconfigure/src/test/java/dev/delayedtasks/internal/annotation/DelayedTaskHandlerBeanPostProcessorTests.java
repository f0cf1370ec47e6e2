package dev.delayedtasks.internal.annotation;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.delayedtasks.TaskContext;
import dev.delayedtasks.TaskId;
import dev.delayedtasks.annotation.DelayedTaskHandler;
import dev.delayedtasks.internal.worker.HandlerContainerFactory;
import dev.delayedtasks.internal.worker.HandlerEndpoint;
import dev.delayedtasks.worker.DelayedTaskHandlerRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.retry.RetryPolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.mockito.Mockito.mock;

/**
 * The post-processor on its own, without Redis or Spring Boot: it reads and checks
 * {@code @DelayedTaskHandler} annotations and registers what they declare, leaving every
 * attribute they do not set to the container factory.
 */
class DelayedTaskHandlerBeanPostProcessorTests {

	private final DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();

	private final DelayedTaskHandlerRegistry registry = new DelayedTaskHandlerRegistry(
			mock(HandlerContainerFactory.class));

	private final DelayedTaskHandlerBeanPostProcessor postProcessor = new DelayedTaskHandlerBeanPostProcessor();

	DelayedTaskHandlerBeanPostProcessorTests() {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources()
			.addFirst(new MapPropertySource("test", Map.of("q", "pp-placeholder", "c", "4", "t", "250ms", "start",
					"false", "policy", "quickRetries", "handler-id", "placeholder-id")));
		this.beanFactory.addEmbeddedValueResolver(environment::resolvePlaceholders);
		this.beanFactory.registerSingleton(DelayedTaskHandlerRegistry.BEAN_NAME, this.registry);
		this.postProcessor.setBeanFactory(this.beanFactory);
		this.beanFactory.addBeanPostProcessor(this.postProcessor);
	}

	@Test
	void handlerWithOnlyAQueueLeavesEveryOtherAttributeToTheContainerFactory() {
		HandlerEndpoint endpoint = onlyEndpoint(Map.of("plainHandler", PlainHandler.class));
		assertThat(endpoint.id()).isEqualTo("plainHandler.handle");
		assertThat(endpoint.queue()).isEqualTo("pp-plain");
		assertThat(endpoint.concurrency()).isNull();
		assertThat(endpoint.timeout()).isNull();
		assertThat(endpoint.retryPolicyBeanName()).isNull();
		assertThat(endpoint.autoStartup()).isTrue();
		assertThat(endpoint.method().payloadType()).isEqualTo(String.class);
	}

	@Test
	void attributesAreReadWithTheirPlaceholdersResolved() {
		this.beanFactory.registerSingleton("quickRetries", RetryPolicy.withDefaults());
		HandlerEndpoint endpoint = onlyEndpoint(Map.of("placeholderHandler", PlaceholderHandler.class));
		assertThat(endpoint.id()).isEqualTo("placeholder-id");
		assertThat(endpoint.queue()).isEqualTo("pp-placeholder");
		assertThat(endpoint.concurrency()).isEqualTo(4);
		assertThat(endpoint.timeout()).isEqualTo(Duration.ofMillis(250));
		assertThat(endpoint.retryPolicyBeanName()).isEqualTo("quickRetries");
		assertThat(endpoint.autoStartup()).isFalse();
	}

	@Test
	void retryPolicyBeanDeclaredByTheHandlersOwnConfigurationIsAcceptedWithoutBeingCreated() {
		this.beanFactory.registerBeanDefinition("selfContained", new RootBeanDefinition(SelfContainedHandler.class));
		RootBeanDefinition policy = new RootBeanDefinition();
		policy.setFactoryBeanName("selfContained");
		policy.setFactoryMethodName("ownPolicy");
		this.beanFactory.registerBeanDefinition("ownPolicy", policy);
		this.beanFactory.preInstantiateSingletons();
		this.postProcessor.afterSingletonsInstantiated();
		assertThat(this.registry.getEndpoints()).singleElement()
			.satisfies((endpoint) -> assertThat(endpoint.retryPolicyBeanName()).isEqualTo("ownPolicy"));
	}

	@Test
	void handlerMethodIsCalledWithThePayloadAndTheContext() throws Throwable {
		HandlerEndpoint endpoint = onlyEndpoint(Map.of("contextHandler", ContextHandler.class));
		ContextHandler bean = this.beanFactory.getBean(ContextHandler.class);
		TaskContext context = new TaskContext(TaskId.of("t-1"), "pp-context", 1, 1, Instant.EPOCH, Instant.EPOCH,
				Instant.EPOCH, Map.of(), "token");
		endpoint.method().invoke(42, context);
		assertThat(bean.calls).containsExactly("42 t-1");
	}

	@Test
	void handlerOnAProxiedBeanIsCalledThroughTheProxy() throws Throwable {
		List<String> advised = new ArrayList<>();
		ProxyFactory proxyFactory = new ProxyFactory(new ContextHandler());
		proxyFactory.setProxyTargetClass(true);
		proxyFactory.addAdvice((MethodInterceptor) (invocation) -> {
			advised.add(invocation.getMethod().getName());
			return invocation.proceed();
		});
		Object proxy = proxyFactory.getProxy();
		this.postProcessor.postProcessAfterInitialization(proxy, "proxied");
		this.postProcessor.afterSingletonsInstantiated();
		HandlerEndpoint endpoint = this.registry.getEndpoints().iterator().next();
		assertThat(endpoint.method().bean()).isSameAs(proxy);
		endpoint.method().invoke(7, null);
		assertThat(advised).containsExactly("handle");
	}

	static Stream<Arguments> invalidHandlers() {
		return Stream.of(Arguments.of(TwoPayloads.class, "is not supported: use (P payload)"),
				Arguments.of(ContextFirst.class, "is not supported: use (P payload)"),
				Arguments.of(NoParameters.class, "is not supported: use (P payload)"),
				Arguments.of(StaticMethod.class, "must not be static"), Arguments.of(NoQueue.class, "name the queue"),
				Arguments.of(InvalidQueueName.class, "Queue name 'bad queue' is invalid"),
				Arguments.of(ZeroConcurrency.class, "concurrency '0' must be a whole number of at least 1"),
				Arguments.of(BadTimeout.class, "timeout 'soon' must be a positive duration"),
				Arguments.of(BadAutoStartup.class, "autoStartup 'maybe' must be true or false"),
				Arguments.of(UnknownRetryPolicy.class,
						"retryPolicy names the bean 'missingPolicy', but there is no such bean"),
				Arguments.of(RetryPolicyOfWrongType.class,
						"retryPolicy names the bean 'notAPolicy', which is a java.lang.String"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("invalidHandlers")
	void invalidHandlerFailsNamingTheBeanTheMethodAndTheRule(Class<?> handlerClass, String rule) {
		this.beanFactory.registerSingleton("notAPolicy", "not a policy");
		this.beanFactory.registerBeanDefinition("invalidHandler", new RootBeanDefinition(handlerClass));
		assertThatException().isThrownBy(this.beanFactory::preInstantiateSingletons)
			.satisfies((ex) -> assertThat(NestedExceptionUtils.getMostSpecificCause(ex).getMessage())
				.contains("@DelayedTaskHandler on invalidHandler#handle: ")
				.contains(rule));
		assertThat(this.registry.getEndpoints()).isEmpty();
	}

	@Test
	void twoHandlersOfOneQueueFailNamingBoth() {
		this.beanFactory.registerBeanDefinition("first", new RootBeanDefinition(PlainHandler.class));
		this.beanFactory.registerBeanDefinition("second", new RootBeanDefinition(PlainHandler.class));
		this.beanFactory.preInstantiateSingletons();
		assertThatException().isThrownBy(this.postProcessor::afterSingletonsInstantiated)
			.withMessageContaining("first.handle")
			.withMessageContaining("second.handle")
			.withMessageContaining("one handler per queue");
	}

	@Test
	void beanWithoutHandlersIsLeftAlone() {
		Object bean = new Object();
		assertThat(this.postProcessor.postProcessAfterInitialization(bean, "plain")).isSameAs(bean);
		this.postProcessor.afterSingletonsInstantiated();
		assertThat(this.registry.getEndpoints()).isEmpty();
	}

	private HandlerEndpoint onlyEndpoint(Map<String, Class<?>> handlers) {
		handlers.forEach((name, type) -> this.beanFactory.registerBeanDefinition(name, new RootBeanDefinition(type)));
		this.beanFactory.preInstantiateSingletons();
		this.postProcessor.afterSingletonsInstantiated();
		assertThat(this.registry.getEndpoints()).hasSize(1);
		return this.registry.getEndpoints().iterator().next();
	}

	static class PlainHandler {

		@DelayedTaskHandler(queue = "pp-plain")
		void handle(String payload) {
		}

	}

	static class PlaceholderHandler {

		@DelayedTaskHandler(queue = "${q}", id = "${handler-id}", concurrency = "${c}", timeout = "${t}",
				retryPolicy = "${policy}", autoStartup = "${start}")
		void handle(String payload, TaskContext context) {
		}

	}

	static class SelfContainedHandler {

		RetryPolicy ownPolicy() {
			return RetryPolicy.withDefaults();
		}

		@DelayedTaskHandler(queue = "pp-self", retryPolicy = "ownPolicy")
		void handle(String payload) {
		}

	}

	public static class ContextHandler {

		final List<String> calls = new ArrayList<>();

		@DelayedTaskHandler(queue = "pp-context")
		public void handle(Integer payload, TaskContext context) {
			this.calls.add(payload + " " + ((context != null) ? context.id().value() : "-"));
		}

	}

	static class TwoPayloads {

		@DelayedTaskHandler(queue = "pp-invalid")
		void handle(String first, String second) {
		}

	}

	static class ContextFirst {

		@DelayedTaskHandler(queue = "pp-invalid")
		void handle(TaskContext context, String payload) {
		}

	}

	static class NoParameters {

		@DelayedTaskHandler(queue = "pp-invalid")
		void handle() {
		}

	}

	static class StaticMethod {

		@DelayedTaskHandler(queue = "pp-invalid")
		static void handle(String payload) {
		}

	}

	static class NoQueue {

		@DelayedTaskHandler
		void handle(String payload) {
		}

	}

	static class InvalidQueueName {

		@DelayedTaskHandler(queue = "bad queue")
		void handle(String payload) {
		}

	}

	static class ZeroConcurrency {

		@DelayedTaskHandler(queue = "pp-invalid", concurrency = "0")
		void handle(String payload) {
		}

	}

	static class BadTimeout {

		@DelayedTaskHandler(queue = "pp-invalid", timeout = "soon")
		void handle(String payload) {
		}

	}

	static class BadAutoStartup {

		@DelayedTaskHandler(queue = "pp-invalid", autoStartup = "maybe")
		void handle(String payload) {
		}

	}

	static class UnknownRetryPolicy {

		@DelayedTaskHandler(queue = "pp-invalid", retryPolicy = "missingPolicy")
		void handle(String payload) {
		}

	}

	static class RetryPolicyOfWrongType {

		@DelayedTaskHandler(queue = "pp-invalid", retryPolicy = "notAPolicy")
		void handle(String payload) {
		}

	}

}
